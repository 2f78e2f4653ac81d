"""Formula helpers the pattern factories share (left-nested ∧/∨, the G(called → …) shape)."""

from __future__ import annotations

from collections.abc import Iterable

from sponsio_audit.ltl.ast import FALSE, TRUE, Always, And, Atom, Cmp, Formula, Implies, Num, Or


def c(tool: str) -> Atom:
    """``called(tool)``."""
    return Atom("called", (tool,))


def conj(fs: Iterable[Formula]) -> Formula:
    """Left-nested conjunction (``true`` when empty)."""
    out: Formula | None = None
    for f in fs:
        out = f if out is None else And(out, f)
    return TRUE if out is None else out


def disj(fs: Iterable[Formula]) -> Formula:
    """Left-nested disjunction (``false`` when empty)."""
    out: Formula | None = None
    for f in fs:
        out = f if out is None else Or(out, f)
    return FALSE if out is None else out


def le(term: Atom, n: int | float) -> Cmp:
    """``term <= n``."""
    return Cmp("<=", term, Num(n))


def G(f: Formula) -> Formula:
    return Always(f)


def when_called(tool: str, body: Formula) -> Formula:
    """``G(called(tool) → body)``: the safety shape whose offending events are listed (§4.1)."""
    return Always(Implies(c(tool), body))
