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
caller's context variables. An interrupt of the caller (Ctrl-C) is raised in the
helper thread too, and waited for (``_wait``); inside ``shielded`` it is raised when the
block ends instead.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

FRAMES = 60_000
"""Python frames allowed inside ``deep`` (the default limit is 1 000)."""

STACK_BYTES = 512 << 20
"""C stack of the helper thread (reserved address space; only what is used costs memory)."""

_local = threading.local()
_lock = threading.Lock()
_shields = threading.Lock()
_shielded: dict[int, int] = {}
"""Threads inside ``shielded`` (their ``threading.get_ident``), with its depth."""
_held: dict[int, type[BaseException]] = {}
"""The interrupt ``_wait`` held back from a shielded thread, raised where its shield ends."""


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
    done = threading.Event()

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
        finally:
            done.set()

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
        try:
            _wait(t, done)
        finally:
            sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """A block that an interrupt of ``deep``'s caller (Ctrl-C) does not break into: raised in
    this thread when the block ends, not at the next Python step inside it. For code that
    calls back into Python from C++ and cannot fail there: an interrupt raised in the
    ``enum`` classes that DuckDB's module makes as it is imported aborted the process
    ("Critical nanobind error", exit -6)."""
    me = threading.get_ident()
    try:
        with _shields:
            _shielded[me] = _shielded.get(me, 0) + 1
        yield
    finally:
        with _shields:
            depth = _shielded.pop(me, 1) - 1
            if depth:
                _shielded[me] = depth
            held = None if depth else _held.pop(me, None)
        if held is not None:
            raise held


def _interrupt(t: threading.Thread, e: BaseException) -> None:
    """Raise ``type(e)`` in ``t`` (started) at its next Python step, or where its shield ends."""
    ident = t.ident
    assert ident is not None
    with _shields:
        if ident in _shielded:
            _held[ident] = type(e)
            return
        raise_in = ctypes.pythonapi.PyThreadState_SetAsyncExc
        raise_in(ctypes.c_ulong(ident), ctypes.py_object(type(e)))


def _wait(t: threading.Thread, done: threading.Event) -> None:
    """Wait until ``t`` is ``done``; an exception raised here meanwhile (Ctrl-C's
    ``KeyboardInterrupt``) is raised in ``t`` too, at its next Python step, and ``t`` is waited
    for before it goes on up.

    The work then unwinds in ``t`` (stores closed, worker processes stopped) instead of the
    interpreter ending under a thread still inside DuckDB or Arrow: a ``kill -INT`` of
    ``scan --jobs 2`` aborted the process so (``terminate called after throwing an instance
    of ''``, exit -6) in 2 runs of 3. An event, not ``t.join()``: a join interrupted so
    leaves the thread marked as ended in Python 3.11 while it runs on. A second interrupt
    stops the wait."""
    try:
        done.wait()
    except BaseException as e:
        if t.ident is not None and not done.is_set():
            _interrupt(t, e)
            with contextlib.suppress(BaseException):
                done.wait()
        raise
    t.join()
