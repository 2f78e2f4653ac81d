"""``G(p → F[a,b] q)`` and ``G(p → F q)`` from the true rows of p and q
(``columnar.windows``: the deadline and always_followed_by patterns): the reference's
value, kind, blame, offending events and opened obligation on random traces
(SEMANTICS.md §3, §4.1), and the fast path taken when it applies."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import Always, Atom, Eventually, EventuallyWithin, Formula, Implies, Not
from sponsio_audit.ltl.columnar import Evaluator, check_traces, windows
from sponsio_audit.ltl.nnf import nnf
from tests.ltl import columnar_strategies as S
from tests.ltl.columnar_strategies import many_traces, table
from tests.ltl.test_columnar_sparse import _KNOWN, _layouts, _one_code


def _deadline(p: Atom, w: tuple[int, int] | None, q: Atom, flip: bool) -> Formula:
    trigger = Not(Not(p)) if flip else p
    return Always(Implies(trigger, Eventually(q) if w is None else EventuallyWithin(*w, q)))


DEADLINES = st.builds(
    _deadline,
    st.sampled_from(S.BOOL_ATOMS),
    st.one_of(
        st.none(), st.tuples(st.integers(0, 5), st.integers(0, 5)).map(lambda w: (min(w), max(w)))
    ),
    st.sampled_from(S.BOOL_ATOMS),
    st.booleans(),
)
"""``G(p → F[a,b] q)`` (windows up to 5 rows) and ``G(p → F q)`` over two (possibly
equal) atoms."""


@settings(max_examples=400)
@given(DEADLINES, st.one_of(_KNOWN, many_traces(max_size=12)))
def test_deadline_from_the_true_rows_matches_reference(f, traces):
    seg, cols = table(traces)
    for columns in _layouts(cols, seg.n_rows):
        got = check_traces(f, seg, columns, checker=reference.check)
        for s, t in enumerate(traces):
            assert got.check(s) == reference.check(f, t), (f, t)


@settings(max_examples=50)
@given(DEADLINES, _KNOWN)
def test_the_true_rows_path_is_taken_when_both_atoms_are_known(f, traces):
    seg, cols = table(traces)
    g = nnf(f)
    assert isinstance(g, Always)
    assert windows.g_within(Evaluator(seg, _one_code(cols, seg.n_rows)), g) is not None
    assert windows.g_within(Evaluator(seg, cols), g) is None  # no true rows: whole view
