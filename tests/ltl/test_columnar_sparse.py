"""``G ψ``, ψ future-free, evaluated only at the rows where ψ can fail (``columnar.sparse``).

The sparse path must give exactly what the whole-view path and the
reference give: ψ's Kleene values at any subset of rows equal the
evaluator's values there, and ``check_formula`` of ``G(p → ψ)`` shapes
(conjunctions and disjunctions of them too) equals ``reference.check``,
with columns given directly or sampled from a larger grounded table
(``TakenColumns``, as a contract's view samples them).
"""

from __future__ import annotations

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


@settings(max_examples=300)
@given(PAST, many_traces(), st.data())
def test_values_at_rows_equal_whole_view_values(f, traces, data):
    seg, cols = table(traces)
    n = seg.n_rows
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    rows = np.flatnonzero(keep)
    for columns in (cols, _padded(cols, n)):
        ev = Evaluator(seg, columns)
        got = sparse.at_rows(Evaluator(seg, columns), nnf(f), rows, seg.start[rows])
        want = ev.values(nnf(f))
        assert got.hi.tolist() == want.hi[rows].tolist(), f
        assert got.lo.tolist() == want.lo[rows].tolist(), f


@settings(max_examples=300)
@given(_g_shapes(), many_traces())
def test_sparse_g_past_matches_reference(f, traces):
    seg, cols = table(traces)
    dense = sparse.DENSE
    try:
        for sparse.DENSE in (1.0, dense):  # always the sparse path, then the default rule
            for columns in (cols, _padded(cols, seg.n_rows)):
                got = check_traces(f, seg, columns, checker=reference.check)
                for s, t in enumerate(traces):
                    assert got.check(s) == reference.check(f, t), (f, t)
    finally:
        sparse.DENSE = dense


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
