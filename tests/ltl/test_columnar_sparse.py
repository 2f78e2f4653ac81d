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
from sponsio_audit.ltl.ast import Always, And, Atom, Implies, Or, is_future_free
from sponsio_audit.ltl.columnar import Col, Evaluator, TakenColumns, check_traces, sparse
from sponsio_audit.ltl.nnf import nnf
from tests.ltl import columnar_strategies as S
from tests.ltl.columnar_strategies import many_traces, table

PAST = S.FORMULAS.filter(is_future_free)
TRIGGER = st.one_of(S._LIT, S._LIT.map(lambda p: Implies(p, p)))  # a literal, or always true


def _g_shapes() -> st.SearchStrategy:
    one = st.builds(lambda p, q: Always(Implies(p, q)), S._LIT, PAST)
    two = st.builds(
        lambda op, p, q, r, t: Always(op(Implies(p, q), Implies(r, t))),
        st.sampled_from((And, Or)),
        S._LIT,
        PAST,
        S._LIT,
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


@settings(max_examples=300)
@given(PAST, many_traces(), st.data())
def test_values_at_rows_equal_whole_view_values(f, traces, data):
    seg, cols = table(traces)
    n = seg.n_rows
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    rows = np.flatnonzero(keep)
    for columns in (cols, _padded(cols, n), _coded(cols, n)):
        ev = Evaluator(seg, columns)
        got = sparse.at_rows(Evaluator(seg, columns), nnf(f), rows, seg.start[rows])
        want = ev.values(nnf(f))
        assert got.hi.tolist() == want.hi[rows].tolist(), f
        assert got.lo.tolist() == want.lo[rows].tolist(), f


@settings(max_examples=300)
@given(_g_shapes(), many_traces())
def test_sparse_g_past_matches_reference(f, traces):
    seg, cols = table(traces)
    dense, narrow = sparse.DENSE, sparse.NARROW
    try:
        # always the sparse path (always narrowed), then the default rules
        for sparse.DENSE, sparse.NARROW in ((1.0, 1.0), (dense, narrow)):
            for columns in (cols, _padded(cols, seg.n_rows), _coded(cols, seg.n_rows)):
                got = check_traces(f, seg, columns, checker=reference.check)
                for s, t in enumerate(traces):
                    assert got.check(s) == reference.check(f, t), (f, t)
    finally:
        sparse.DENSE, sparse.NARROW = dense, narrow


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
        for columns in (cols, _padded(cols, n), _coded(cols, n)):
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
