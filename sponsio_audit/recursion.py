"""``deep``: run formula work (parse, validate, evaluate) with room for deep formula trees.

Formulas are trees of frozen dataclasses, and their parser, printers, hashing
and evaluators recurse over them: a contract nested 1 000 deep, or a
blocklist of 5 000 regexes folded into one disjunction, is deeper than
Python's default recursion limit (1 000 frames) and the main thread's C stack
allow. ``deep(fn, …)`` runs ``fn`` in a helper thread with a ``STACK_BYTES``
stack and a recursion limit of ``FRAMES`` for its duration, so such formulas
load and evaluate; past that a ``RecursionError`` (raised as ``TooDeep``, with
the limit named) is a clear error, never a crash of the interpreter.

The recursion limit is interpreter-wide in CPython: ``deep`` raises it only
while its thread runs and puts the previous value back, and calls nest
(a ``deep`` inside a ``deep`` runs inline). The helper thread runs in a copy of the
caller's context variables.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

FRAMES = 60_000
"""Python frames allowed inside ``deep`` (the default limit is 1 000)."""

STACK_BYTES = 512 << 20
"""C stack of the helper thread (reserved address space; only what is used costs memory)."""

_local = threading.local()
_lock = threading.Lock()


class TooDeep(RecursionError):
    """A formula (or other tree) deeper than ``deep`` allows; the message names the limit."""


def _too_deep() -> TooDeep:
    return TooDeep(f"formula nested deeper than allowed (limit frames={FRAMES})")


def deep(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` with ``FRAMES`` frames and a ``STACK_BYTES`` stack (see module)."""
    if getattr(_local, "inside", False):
        try:
            return fn(*args, **kwargs)
        except TooDeep:
            raise
        except RecursionError:
            raise _too_deep() from None
    box: dict[str, Any] = {}
    context = contextvars.copy_context()  # the caller's settings (regexes.time_limit) go along

    def run() -> None:
        _local.inside = True
        try:
            box["value"] = fn(*args, **kwargs)
        except TooDeep as e:
            box["error"] = e
        except RecursionError:
            box["error"] = _too_deep()
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    with _lock:
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size()
        try:
            # a platform with a smaller cap keeps its default stack
            with contextlib.suppress(ValueError, RuntimeError):
                threading.stack_size(STACK_BYTES)
            sys.setrecursionlimit(max(FRAMES, old_limit))
            t = threading.Thread(target=context.run, args=(run,), name="sponsio-deep", daemon=True)
            t.start()
        finally:
            threading.stack_size(old_stack)
        t.join()
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]
