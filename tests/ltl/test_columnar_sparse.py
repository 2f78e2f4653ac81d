"""``G ψ``, ψ future-free, evaluated only at the rows where ψ can fail (``columnar.sparse``).

The sparse path must give exactly what the whole-view path and the
reference give: ψ's Kleene values at any subset of rows equal the
evaluator's values there, and ``check_formula`` of ``G(p → ψ)`` shapes
(conjunctions and disjunctions of them too) equals ``reference.check``,
with columns given directly or sampled from a larger grounded table
(``TakenColumns``, as a contract's view samples them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import (
    Always,
    And,
    Atom,
    Implies,
    Not,
    Once,
    OnceWithin,
    Or,
    Yesterday,
    is_future_free,
)
from sponsio_audit.ltl.columnar import Col, Evaluator, TakenColumns, check_traces, sparse
from sponsio_audit.ltl.nnf import nnf
from tests.ltl import columnar_strategies as S
from tests.ltl.columnar_strategies import many_traces, table

PAST = S.FORMULAS.filter(is_future_free)
TRIGGER = st.one_of(S._LIT, S._LIT.map(lambda p: Implies(p, p)))  # a literal, or always true


_P = st.one_of(S._LIT, st.sampled_from(S.BOOL_ATOMS).map(Yesterday))
"""Triggers p of ``G(p → ψ)``: literals, and Y of an atom (``workflow_step``)."""


_ONCE = st.builds(
    lambda neg, k, q: Not(Once(q) if k is None else OnceWithin(k, q)) if neg else Once(q),
    st.booleans(),
    st.sampled_from((None, 2, 9, 12)),
    st.sampled_from(S.BOOL_ATOMS),
)
"""ψ of the precedence patterns: O q, ¬O q, ¬O[k] q (long windows are searched)."""


def _g_shapes() -> st.SearchStrategy:
    one = st.builds(lambda p, q: Always(Implies(p, q)), _P, st.one_of(PAST, _ONCE))
    two = st.builds(
        lambda op, p, q, r, t: Always(op(Implies(p, q), Implies(r, t))),
        st.sampled_from((And, Or)),
        _P,
        PAST,
        _P,
        PAST,
    )
    return st.one_of(one, two, st.builds(Always, PAST))


def _padded(cols: dict[Atom, Col], n: int) -> TakenColumns:
    """The same columns as rows 1, 3, 5, … of a table twice as long (junk in between)."""
    base = {}
    for a, c in cols.items():
        value = np.repeat(c.value, 2)
        unknown = np.repeat(c.unknown, 2)
        value[::2] = ~value[::2] if value.dtype == bool else value[::2] + 7
        unknown[::2] = True
        base[a] = Col(value, unknown)
    return TakenColumns(base, np.arange(n, dtype=np.int64) * 2 + 1)


@dataclass(frozen=True)
class _Coded:
    """A bool column that also carries ``coded``: codes shared by every bool atom."""

    value: np.ndarray
    unknown: np.ndarray
    coded: tuple[np.ndarray, np.ndarray]


def _coded(cols: dict[Atom, Col], n: int) -> TakenColumns:
    """``_padded``'s layout, the bool atoms as one shared code array (bit k: atom k) and
    a lookup table each, as the grounding gives tool atoms (``TakenColumns`` then
    takes the codes once for all of them)."""
    padded = _padded(cols, n)
    bools = [a for a, c in padded.base.items() if c.value.dtype == bool]
    codes = np.zeros(2 * n, dtype=np.int32)
    for k, a in enumerate(bools):
        codes |= padded.base[a].value.astype(np.int32) << k
    base: dict[Atom, object] = dict(padded.base)
    for k, a in enumerate(bools):
        lut = ((np.arange(2 ** len(bools)) >> k) & 1).astype(bool)
        c = padded.base[a]
        base[a] = _Coded(lut[codes], c.unknown, (codes, lut))
    return TakenColumns(base, padded.rows)  # type: ignore[arg-type]


def _one_code(cols: dict[Atom, Col], n: int) -> TakenColumns:
    """``_padded``'s layout with no unknown at the junk rows, each bool atom coded by its
    own codes (1 true, 0 false) and a lookup table with one true code, as one tool's
    calls are: an atom never unknown is then answered from the index of the view's
    codes (``TakenColumns.true_rows``), the others by their values."""
    padded = _padded(cols, n)
    base: dict[Atom, object] = {}
    for a, c in padded.base.items():
        unknown = c.unknown.copy()
        unknown[::2] = False
        value = c.value & ~unknown if c.value.dtype == bool else c.value
        if value.dtype == bool:
            base[a] = _Coded(value, unknown, (value.astype(np.int8), np.array([False, True])))
        else:
            base[a] = Col(value, unknown)
    return TakenColumns(base, padded.rows)  # type: ignore[arg-type]


def _layouts(cols: dict[Atom, Col], n: int) -> tuple:
    """The same columns given directly, sampled, coded together and coded one by one."""
    return (cols, _padded(cols, n), _coded(cols, n), _one_code(cols, n))


@settings(max_examples=300)
@given(PAST, many_traces(), st.data())
def test_values_at_rows_equal_whole_view_values(f, traces, data):
    seg, cols = table(traces)
    n = seg.n_rows
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    rows = np.flatnonzero(keep)
    for columns in _layouts(cols, n):
        ev = Evaluator(seg, columns)
        got = sparse.at_rows(Evaluator(seg, columns), nnf(f), rows, seg.start[rows])
        want = ev.values(nnf(f))
        assert got.hi.tolist() == want.hi[rows].tolist(), f
        assert got.lo.tolist() == want.lo[rows].tolist(), f


@settings(max_examples=300)
@given(_g_shapes(), many_traces())
def test_sparse_g_past_matches_reference(f, traces):
    seg, cols = table(traces)
    dense, narrow, short = sparse.DENSE, sparse.NARROW, sparse.SHORT_WINDOW
    try:
        # always the sparse path (always narrowed, every window searched), then the defaults
        rules = ((1.0, 1.0, 0), (dense, narrow, short))
        for sparse.DENSE, sparse.NARROW, sparse.SHORT_WINDOW in rules:
            for columns in _layouts(cols, seg.n_rows):
                got = check_traces(f, seg, columns, checker=reference.check)
                for s, t in enumerate(traces):
                    assert got.check(s) == reference.check(f, t), (f, t)
    finally:
        sparse.DENSE, sparse.NARROW, sparse.SHORT_WINDOW = dense, narrow, short


@settings(max_examples=100)
@given(S._LIT, PAST, many_traces())
def test_candidates_cover_every_row_that_can_fail(p, q, traces):
    seg, cols = table(traces)
    ev = Evaluator(seg, cols)
    g = nnf(Always(Implies(p, q)))
    assert isinstance(g, Always)
    cand = sparse.candidates(ev, g.arg)
    assert cand is not None  # the trigger is a literal: the rows are known
    assert not (~ev.values(g.arg).lo & ~cand).any()


@settings(max_examples=300)
@given(_g_shapes(), many_traces(), st.data())
def test_candidate_rows_cover_every_row_that_can_fail(f, traces, data):
    """Narrowed candidates (∨'s second side looked at only among its first side's rows,
    sampled, mask or rows by density) still hold every row where ψ may be not true."""
    seg, cols = table(traces)
    n = seg.n_rows
    narrow = sparse.NARROW
    try:
        sparse.NARROW = data.draw(st.sampled_from((0.0, narrow, 1.0)))
        for columns in _layouts(cols, n):
            ev = Evaluator(seg, columns)
            g = nnf(f)
            rows = sparse.candidate_rows(ev, g.arg)
            if rows is None:
                continue
            assert rows.tolist() == sorted(set(rows.tolist()))
            may_fail = np.flatnonzero(~Evaluator(seg, columns).values(g.arg).lo)
            assert set(may_fail.tolist()) <= set(rows.tolist()), f
    finally:
        sparse.NARROW = narrow


_KNOWN = st.lists(
    st.integers(0, 16)
    .flatmap(lambda n: st.binary(min_size=4 * n, max_size=4 * n))
    .map(lambda raw: S._decode(0.0, raw)),
    min_size=1,
    max_size=5,
)
"""Traces without unknowns: every bool atom's true rows are then known (``_one_code``)."""


@settings(max_examples=300)
@given(_P, _ONCE, st.one_of(_KNOWN, many_traces(max_size=16)))
def test_precedence_from_the_true_rows_matches_reference(p, q, traces):
    """``G(p → O q)``, ``G(p → ¬O q)``, ``G(p → ¬O[k] q)`` and ``G(Y p → …)``, their
    O/H searched among q's true rows when the columns know them (``_one_code``) and
    every window searched: the reference's verdicts, blame and offending events."""
    seg, cols = table(traces)
    f = Always(Implies(p, q))
    short = sparse.SHORT_WINDOW
    try:
        for sparse.SHORT_WINDOW in (0, short):
            for columns in _layouts(cols, seg.n_rows):
                got = check_traces(f, seg, columns, checker=reference.check)
                for s, t in enumerate(traces):
                    assert got.check(s) == reference.check(f, t), (f, t)
    finally:
        sparse.SHORT_WINDOW = short
