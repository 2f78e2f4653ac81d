"""The regex policy: every contract regex is RE2 (linear time on untrusted text).

``compile_regex`` is the one way a pattern, an atom or the guard compiles a
contract regex: RE2, unanchored search, errors not logged to stderr, and a
``RegexError`` that says why RE2 rejects it and whether the only cause is
PCRE lookaround or a backreference (such a clause loads as skipped, not as
an error). ``literal`` escapes text into a regex; ``is_literal`` tells
whether a regex body is plain text (the guard then emits a substring test).
"""

from __future__ import annotations

import functools
import re
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


@functools.lru_cache(maxsize=1024)
def compile_regex(regex: str) -> Any:
    """Compile ``regex`` with RE2 (quietly, cached); raise ``RegexError`` saying why it fails."""
    try:
        return re2.compile(regex, options=_OPTIONS)
    except re2.error as e:
        raw = e.args[0] if e.args else str(e)
        reason = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        raise RegexError(regex, reason, _is_lookaround(regex, reason)) from None


def literal(text: str) -> str:
    """``text`` as an RE2 regex that matches it literally (metacharacters escaped)."""
    return _META.sub(r"\\\1", text)


def is_literal(body: str) -> bool:
    """True when ``body`` is non-empty and has no regex metacharacter (plain text)."""
    return bool(body) and not any(ch in _META_CHARS for ch in body)
