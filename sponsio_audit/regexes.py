r"""The regex policy: every contract regex is RE2 (linear time on untrusted text), except
those RE2 cannot run because they use lookaround or backreferences.

``compile_regex`` is the one way a pattern, an atom or the guard compiles a
contract regex: RE2, unanchored search, errors not logged to stderr. A
regex that RE2 rejects only for PCRE lookaround or a backreference (Sponsio's
packs are full of ``(?<!\S)``, ``(?!\S)``, ``(?=.*X)``) compiles with the
backtracking ``regex`` package instead (``Backtracking``), whose every
search runs under a time limit (SEMANTICS.md §5). ``matches`` is the
three-valued search: True, False, or None when the time limit ran out (the
atom is unknown at that event). The limit is ``DEFAULT_TIME_LIMIT`` unless a
run sets another with ``time_limit`` (the ``regex_timeout_ms`` config key, the
``--regex-timeout-ms`` flag), whose ``Searches`` counts the searches that ran
out of time, for the report. A regex that neither engine compiles raises
``RegexError``. ``literal`` escapes text into a regex; ``is_literal`` tells
whether a regex body is plain text (the guard then emits a substring test).

The limit and the count belong to the ``time_limit`` block around a run, held
in a context variable: two audits in one process (on two threads) each keep
their own. A thread the run starts sees them when it runs in a copy of the
run's context (``threads.ordered_map``, ``recursion``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a bad contract regex is reported by the caller, not on stderr

_LOOKAROUND_OPS = ("(?=", "(?!", "(?<=", "(?<!")
_META_CHARS = frozenset("\\.^$|?*+()[]{}")
_META = re.compile(r"([\\.^$|?*+()\[\]{}])")


class RegexError(ValueError):
    """A regex RE2 rejects; ``lookaround`` is True when the only cause is PCRE lookaround or
    a backreference (loaded as a skipped clause, not an error)."""

    def __init__(self, regex: str, reason: str, lookaround: bool) -> None:
        self.regex = regex
        self.reason = reason
        self.lookaround = lookaround
        super().__init__(f"invalid RE2 regex {regex!r}: {reason}")


def _is_lookaround(regex: str, reason: str) -> bool:
    if reason.startswith("invalid perl operator: "):
        op = reason.removeprefix("invalid perl operator: ")
        if op in _LOOKAROUND_OPS:
            return True
        return op == "(?P" and "(?P=" in regex  # named backreference
    if reason.startswith("invalid escape sequence: \\"):
        esc = reason.removeprefix("invalid escape sequence: \\")
        return esc.isdigit() and esc != "0"
    return False


DEFAULT_TIME_LIMIT = 0.1
"""Seconds one backtracking search may take before the atom is unknown at that event."""


@dataclass
class Searches:
    """The backtracking searches of one ``time_limit`` block: the limit of each, in seconds,
    and how many ran out of time (on any thread of the run)."""

    limit: float = DEFAULT_TIME_LIMIT
    timeouts: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def timed_out(self) -> None:
        """Count one search that ran out of time (searches on several threads may at once)."""
        with self._lock:
            self.timeouts += 1


_SEARCHES: contextvars.ContextVar[Searches | None] = contextvars.ContextVar(
    "sponsio_audit_searches", default=None
)
"""The innermost ``time_limit`` block's searches (None outside one: the default limit,
nothing counted)."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[Searches]:
    """Run the block with ``seconds`` as the backtracking time limit (None: the default);
    the ``Searches`` yielded counts the searches in it that ran out of time."""
    searches = Searches(DEFAULT_TIME_LIMIT if seconds is None else float(seconds))
    token = _SEARCHES.set(searches)
    try:
        yield searches
    finally:
        _SEARCHES.reset(token)


class Backtracking:
    """A lookaround/backreference regex run by the ``regex`` package under the time limit;
    ``search`` raises ``TimeoutError`` when the limit runs out (``matches`` turns that into
    unknown)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._rx = _backtracking().compile(pattern)

    def search(self, text: str) -> Any:
        searches = _SEARCHES.get()
        limit = DEFAULT_TIME_LIMIT if searches is None else searches.limit
        try:
            return self._rx.search(text, timeout=limit)
        except TimeoutError:
            if searches is not None:
                searches.timed_out()
            raise


def _backtracking() -> Any:
    """The ``regex`` package, imported on first use: only lookaround and backreferences
    need it, and its import costs 25 ms of every command's start-up."""
    import regex

    return regex


def matches(rx: Any, text: str | None) -> bool | None:
    """Whether compiled ``rx`` matches somewhere in ``text``; None when it ran out of time
    (no text: no match)."""
    if text is None:
        return False
    try:
        return rx.search(text) is not None
    except TimeoutError:
        return None


def is_backtracking(rx: Any) -> bool:
    """True when ``rx`` is run by the backtracking engine (not RE2)."""
    return isinstance(rx, Backtracking)


@functools.lru_cache(maxsize=1024)
def compile_regex(regex: str) -> Any:
    """Compile ``regex`` (quietly, cached): RE2, or the backtracking engine when RE2 rejects
    it only for lookaround or a backreference; raise ``RegexError`` saying why it fails."""
    try:
        return re2.compile(regex, options=_OPTIONS)
    except re2.error as e:
        raw = e.args[0] if e.args else str(e)
        reason = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        lookaround = _is_lookaround(regex, reason)
        if lookaround:
            try:
                return Backtracking(regex)
            except _backtracking().error as err:
                reason = f"{reason}; the backtracking engine: {err}"
        raise RegexError(regex, reason, lookaround) from None


def literal(text: str) -> str:
    """``text`` as an RE2 regex that matches it literally (metacharacters escaped)."""
    return _META.sub(r"\\\1", text)


def is_literal(body: str) -> bool:
    """True when ``body`` is non-empty and has no regex metacharacter (plain text)."""
    return bool(body) and not any(ch in _META_CHARS for ch in body)
