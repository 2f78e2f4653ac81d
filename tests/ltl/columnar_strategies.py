"""Strategies for the columnar evaluator: many grounded traces as one segmented table.

The atoms are those of ``tests.ltl.strategies``. Here: random formulas
over every operator of SEMANTICS.md §3 and the NNF duals, the pattern
library's ``G ψ`` shapes, grounded traces with unknowns, their stacking
into the row arrays the columnar evaluator reads (one value array and one
unknown mask per atom, as ``atoms.columnar`` grounds them), and random
contracts for §4.2.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st

from sponsio_audit.ltl.ast import (
    CMP_OPS,
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
    Num,
    Once,
    OnceWithin,
    Or,
    Release,
    Since,
    Str,
    StrongNext,
    Trigger,
    Until,
    WeakUntil,
    WeakYesterday,
    Yesterday,
)
from sponsio_audit.ltl.columnar import Col, Segments
from sponsio_audit.ltl.contract import Clause, Contract
from sponsio_audit.ltl.reference import Valuation
from tests.ltl.strategies import ALL_ATOMS, BOOL_ATOMS, COUNT, A, B, C  # noqa: F401 - re-exported

UNARY = (Not, Next, Eventually, Always, Yesterday, Once, Historically, StrongNext, WeakYesterday)
BINARY = (And, Or, Implies, Until, WeakUntil, Since, Release, Trigger)
_K = st.integers(0, 4)
_WINDOW = st.tuples(_K, _K).map(lambda w: (min(w), max(w)))  # the parser rejects [a,b], a > b

LEAVES = st.one_of(
    st.sampled_from(BOOL_ATOMS),
    st.sampled_from(BOOL_ATOMS),
    st.builds(Cmp, st.sampled_from(CMP_OPS), st.just(COUNT), st.integers(0, 4).map(Num)),
    st.builds(Cmp, st.sampled_from(CMP_OPS), st.integers(0, 4).map(Num), st.just(COUNT)),
    st.builds(Cmp, st.sampled_from(("==", "!=")), st.just(COUNT), st.just(Str("x"))),
    st.sampled_from((Bool(True), Bool(False))),
)


def _extend(sub: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
    return st.one_of(
        st.builds(lambda op, f: op(f), st.sampled_from(UNARY), sub),
        st.builds(lambda op, f, g: op(f, g), st.sampled_from(BINARY), sub, sub),
        st.builds(OnceWithin, _K, sub),
        st.builds(HistoricallyWithin, _K, sub),
        st.builds(lambda w, f: EventuallyWithin(w[0], w[1], f), _WINDOW, sub),
        st.builds(lambda w, f: AlwaysWithin(w[0], w[1], f), _WINDOW, sub),
    )


FORMULAS = st.recursive(LEAVES, _extend, max_leaves=6)
"""Random formulas over every operator and dual (built once: strategies are costly to make)."""

_LIT = st.one_of(st.sampled_from(BOOL_ATOMS), st.sampled_from(BOOL_ATOMS).map(Not))
_SMALL = st.recursive(LEAVES, _extend, max_leaves=3)

PATTERNS = st.builds(
    Always,
    st.one_of(
        st.builds(lambda p, q: Implies(p, Once(q)), _LIT, _LIT),
        st.builds(lambda p, q: Implies(p, Eventually(q)), _LIT, _LIT),
        st.builds(lambda p, w, q: Implies(p, EventuallyWithin(w[0], w[1], q)), _LIT, _WINDOW, _LIT),
        st.builds(lambda p, q: Implies(p, Not(Once(q))), _LIT, _LIT),
        st.builds(lambda p, n, q: Implies(p, Not(Yesterday(OnceWithin(n, q)))), _LIT, _K, _LIT),
        st.builds(lambda p, q: Implies(Yesterday(p), q), _LIT, _LIT),
        st.builds(lambda p, q: Implies(p, Next(q)), _LIT, _LIT),
        st.builds(lambda p, n: Implies(p, Cmp("<=", COUNT, Num(n))), _LIT, _K),
        st.builds(lambda p, q, r: Implies(p, Since(Not(q), r)), _LIT, _LIT, _LIT),
        st.builds(lambda p, q: Implies(p, Always(q)), _LIT, _LIT),
        st.builds(lambda p, q: Or(Until(Not(p), q), Always(Not(p))), _LIT, _LIT),
        st.builds(Implies, _SMALL, _SMALL),
        _SMALL,
    ),
)
"""``G ψ`` shapes of the pattern library (§6) and their future forms."""

ANY_FORMULAS = st.one_of(FORMULAS, FORMULAS, PATTERNS)


def table(traces: Sequence[Sequence[Valuation]]) -> tuple[Segments, dict[Atom, Col]]:
    """Segments and grounded columns of ``traces`` laid end to end.

    Bool atoms become bool arrays and ``count`` a float64 array (as the
    columnar grounding gives int atoms); unknown values are 0/False under
    the mask.
    """
    rows = [v for t in traces for v in t]
    columns: dict[Atom, Col] = {}
    for a in ALL_ATOMS:
        vals = [r[a] for r in rows]
        unknown = np.array([x is None for x in vals], dtype=bool)
        if a == COUNT:
            value = np.array([0 if x is None else x for x in vals], dtype=np.float64)
        else:
            value = np.array([bool(x) for x in vals], dtype=bool)
        columns[a] = Col(value, unknown)
    return Segments.from_lengths([len(t) for t in traces]), columns


def _decode(rate: float, raw: bytes) -> list[Valuation]:
    """Four bytes per event, one per atom: unknown below ``rate``, else a value."""
    out: list[Valuation] = []
    for i in range(0, len(raw), 4):
        ev: dict[Atom, object] = {}
        for a, b in zip(ALL_ATOMS, raw[i : i + 4], strict=True):
            unknown = (b >> 1) / 128 < rate
            ev[a] = None if unknown else (b >> 1) % 5 if a == COUNT else bool(b & 1)
        out.append(ev)  # type: ignore[arg-type]
    return out


def traces(max_size: int = 8) -> st.SearchStrategy[list[Valuation]]:
    """Grounded traces of 0..max_size events with 0%, 10% or 30% unknowns,
    drawn as one byte string per trace (cheap to generate, shrinks to all-false)."""
    rate = st.sampled_from((0.0, 0.1, 0.3))
    raw = st.integers(0, max_size).flatmap(lambda n: st.binary(min_size=4 * n, max_size=4 * n))
    return st.builds(_decode, rate, raw)


def many_traces(max_traces: int = 5, max_size: int = 8) -> st.SearchStrategy[list[list[Valuation]]]:
    """Several traces (empty ones included), each with its own unknown rate."""
    return st.lists(traces(max_size=max_size), min_size=1, max_size=max_traces)


ASSUMPTIONS = st.one_of(st.sampled_from(BOOL_ATOMS), _SMALL, PATTERNS)
"""Assumptions: atoms, small formulas (often state predicates), pattern shapes."""

JUDGE = "needs an LLM judge"


@st.composite
def contracts(draw: st.DrawFn) -> Contract:
    """A random contract: 1–3 guarantees, 0–2 assumptions, global or first_match,
    now and then a skipped (LLM-judge) clause."""

    def clause(f: Formula) -> Clause:
        return Clause(f, skipped=JUDGE if draw(st.integers(0, 7)) == 0 else None)

    gs = draw(st.lists(ANY_FORMULAS, min_size=1, max_size=3))
    assumptions = draw(st.lists(ASSUMPTIONS, max_size=2))
    return Contract(
        id=f"c{draw(st.integers(0, 99))}",
        agent="*",
        guarantees=tuple(clause(f) for f in gs),
        assumptions=tuple(clause(f) for f in assumptions),
        activate_at=draw(st.sampled_from(("global", "first_match"))),
    )
