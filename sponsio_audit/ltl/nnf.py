"""Negation normal form (SEMANTICS.md §4.1): negation pushed down to atoms.

Uses the internal duals of ``ast``: ¬X = N¬, ¬U = R, ¬Y = Z¬, ¬O = H¬,
¬S = T, ¬F[a,b] = G[a,b]¬. Implication is expanded. De Morgan laws hold
in Kleene's strong logic, so the NNF has the same three-valued meaning.
"""

from __future__ import annotations

from sponsio_audit.ltl.ast import (
    Always,
    AlwaysWithin,
    And,
    Atom,
    Bool,
    Cmp,
    Eventually,
    EventuallyWithin,
    Formula,
    Historically,
    HistoricallyWithin,
    Implies,
    Next,
    Not,
    Once,
    OnceWithin,
    Or,
    Release,
    Since,
    StrongNext,
    Trigger,
    Until,
    WeakUntil,
    WeakYesterday,
    Yesterday,
)


def nnf(f: Formula) -> Formula:
    """``f`` in negation normal form (only atoms and comparisons are negated)."""
    match f:
        case Bool() | Atom() | Cmp():
            return f
        case Not(a):
            return _neg(a)
        case And(l, r):
            return And(nnf(l), nnf(r))
        case Or(l, r):
            return Or(nnf(l), nnf(r))
        case Implies(l, r):
            return Or(_neg(l), nnf(r))
        case Next(a):
            return Next(nnf(a))
        case StrongNext(a):
            return StrongNext(nnf(a))
        case Eventually(a):
            return Eventually(nnf(a))
        case Always(a):
            return Always(nnf(a))
        case Until(l, r):
            return Until(nnf(l), nnf(r))
        case WeakUntil(l, r):
            return WeakUntil(nnf(l), nnf(r))
        case Release(l, r):
            return Release(nnf(l), nnf(r))
        case Yesterday(a):
            return Yesterday(nnf(a))
        case WeakYesterday(a):
            return WeakYesterday(nnf(a))
        case Once(a):
            return Once(nnf(a))
        case Historically(a):
            return Historically(nnf(a))
        case Since(l, r):
            return Since(nnf(l), nnf(r))
        case Trigger(l, r):
            return Trigger(nnf(l), nnf(r))
        case OnceWithin(k, a):
            return OnceWithin(k, nnf(a))
        case HistoricallyWithin(k, a):
            return HistoricallyWithin(k, nnf(a))
        case EventuallyWithin(lo, hi, a):
            return EventuallyWithin(lo, hi, nnf(a))
        case AlwaysWithin(lo, hi, a):
            return AlwaysWithin(lo, hi, nnf(a))
    raise TypeError(f"not a formula: {f!r}")


def _neg(f: Formula) -> Formula:
    """NNF of ¬f."""
    match f:
        case Bool(v):
            return Bool(not v)
        case Atom() | Cmp():
            return Not(f)
        case Not(a):
            return nnf(a)
        case And(l, r):
            return Or(_neg(l), _neg(r))
        case Or(l, r):
            return And(_neg(l), _neg(r))
        case Implies(l, r):
            return And(nnf(l), _neg(r))
        case Next(a):
            return StrongNext(_neg(a))
        case StrongNext(a):
            return Next(_neg(a))
        case Eventually(a):
            return Always(_neg(a))
        case Always(a):
            return Eventually(_neg(a))
        case Until(l, r):
            return Release(_neg(l), _neg(r))
        case Release(l, r):
            return Until(_neg(l), _neg(r))
        case WeakUntil(l, r):
            # ¬(φ W ψ) = ¬ψ U (¬φ ∧ ¬ψ)
            return Until(_neg(r), And(_neg(l), _neg(r)))
        case Yesterday(a):
            return WeakYesterday(_neg(a))
        case WeakYesterday(a):
            return Yesterday(_neg(a))
        case Once(a):
            return Historically(_neg(a))
        case Historically(a):
            return Once(_neg(a))
        case Since(l, r):
            return Trigger(_neg(l), _neg(r))
        case Trigger(l, r):
            return Since(_neg(l), _neg(r))
        case OnceWithin(k, a):
            return HistoricallyWithin(k, _neg(a))
        case HistoricallyWithin(k, a):
            return OnceWithin(k, _neg(a))
        case EventuallyWithin(lo, hi, a):
            return AlwaysWithin(lo, hi, _neg(a))
        case AlwaysWithin(lo, hi, a):
            return EventuallyWithin(lo, hi, _neg(a))
    raise TypeError(f"not a formula: {f!r}")
