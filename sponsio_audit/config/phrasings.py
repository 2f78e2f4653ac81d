"""Sponsio's fixed backtick phrasings (ARCHITECTURE.md, "Configuration compatibility").

A constraint written as a string is either one of these keyword forms,
accepted exactly (outer whitespace and runs of spaces aside), or free
natural language, which the audit refuses with ``NL_HELP`` rather than
guess at.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sponsio_audit.ltl.ast import Atom, Eventually, Not
from sponsio_audit.ltl.contract import Clause
from sponsio_audit.ltl.patterns import build, c, when_called
from sponsio_audit.regexes import literal

_T = r"`([^`]+)`"
_N = r"(\d+)"

NL_HELP = (
    "natural-language constraints are not supported (the audit does not guess at prose); "
    'write {pattern: NAME, args: [...]}, {ltl: "FORMULA"}, or one of the backtick '
    "phrasings: `A` must precede `B` | `A` always followed by `B` | "
    "never call `A` and `B` together | `A` at most N times | "
    "cooldown of N steps between `A`s | `A` requires permission `P` | "
    '`T` args must not contain "X" | called `A`'
)


def _pattern(name: str, *groups: int) -> Callable[[re.Match[str], bool], Clause]:
    def make(m: re.Match[str], assumption: bool) -> Clause:
        values = [m.group(g) for g in groups]
        return build(name, [int(v) if v.isdigit() else v for v in values]).clause()

    return make


def _no_contain(m: re.Match[str], assumption: bool) -> Clause:
    tool, text = m.group(1), m.group(2)
    f = when_called(tool, Not(Atom("arg_has", (tool, literal(text)))))
    return Clause(f, desc=f'{tool} args must not contain "{text}"')


def _called(m: re.Match[str], assumption: bool) -> Clause:
    atom = c(m.group(1))
    return Clause(Eventually(atom) if assumption else atom, desc=f"called `{m.group(1)}`")


_PHRASES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], bool], Clause]], ...] = (
    (re.compile(rf"{_T} must precede {_T}"), _pattern("must_precede", 1, 2)),
    (re.compile(rf"{_T} always followed by {_T}"), _pattern("always_followed_by", 1, 2)),
    (re.compile(rf"never call {_T} and {_T} together"), _pattern("mutual_exclusion", 1, 2)),
    (re.compile(rf"(?:tool )?{_T} at most {_N} times"), _pattern("rate_limit", 1, 2)),
    (re.compile(rf"cooldown of {_N} steps between {_T}s"), _pattern("cooldown", 2, 1)),
    (re.compile(rf"{_T} requires permission {_T}"), _pattern("requires_permission", 1, 2)),
    (re.compile(rf'{_T} args must not contain "([^"]*)"'), _no_contain),
    (re.compile(rf"called {_T}"), _called),
)


def phrase(text: str, assumption: bool = False) -> Clause | None:
    """The clause for a backtick phrasing, or None when ``text`` is not one.

    ``called `A``` is the atom called(A) as a guarantee and F called(A) as an
    assumption. Raises ``PatternArgError`` when a phrase's values are invalid.
    """
    norm = re.sub(r"\s+", " ", text.strip())
    for rx, make in _PHRASES:
        m = rx.fullmatch(norm)
        if m:
            return make(m, assumption)
    return None
