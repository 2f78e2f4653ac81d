"""Value terms (``arg_value``, ``ctx_value``: JSON values, only compared) in the three
evaluators: the columnar evaluator over object columns and the monitor equal the
reference on random traces whose values mix strings, numbers, bools, composites and
unknowns (SEMANTICS.md §2–§3; comparison rules in ``reference.compare``)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import (
    CMP_OPS,
    Always,
    And,
    Atom,
    Cmp,
    Formula,
    Implies,
    Not,
    Num,
    Once,
    Or,
    Str,
    subformulas,
)
from sponsio_audit.ltl.columnar import Col, Evaluator, Segments
from sponsio_audit.ltl.monitor import monitor_check
from sponsio_audit.ltl.reference import Composite, Valuation

CALLED = Atom("called", ("pay",))
ARG = Atom("arg_value", ("pay", "pm"))
CTX = Atom("ctx_value", ("orig",))
COUNT = Atom("count", ("pay",))
VALUES = ["pm_1", "pm_2", "5", 5, 5.0, 7, True, False, Composite("[1]"), Composite("null"), None]
TERMS = st.sampled_from([ARG, CTX, COUNT, Str("pm_1"), Str("5"), Num(5), Num(6)])
LEAVES = st.one_of(
    st.just(CALLED),
    st.builds(Cmp, st.sampled_from(CMP_OPS), st.sampled_from([ARG, CTX]), TERMS),
    st.builds(Cmp, st.sampled_from(CMP_OPS), TERMS, st.sampled_from([ARG, CTX])),
)
FORMULAS = st.recursive(
    LEAVES,
    lambda sub: st.one_of(
        st.builds(Not, sub),
        st.builds(And, sub, sub),
        st.builds(Or, sub, sub),
        st.builds(Once, sub),
        st.builds(lambda a, b: Always(Implies(a, b)), sub, sub),
    ),
    max_leaves=4,
)


@st.composite
def traces(draw: st.DrawFn) -> list[Valuation]:
    out: list[Valuation] = []
    for _ in range(draw(st.integers(0, 6))):
        out.append(
            {
                CALLED: draw(st.booleans()),
                ARG: draw(st.sampled_from(VALUES)),
                CTX: draw(st.sampled_from(VALUES)),
                COUNT: draw(st.one_of(st.none(), st.integers(0, 7))),
            }
        )
    return out


def table(trs: list[list[Valuation]]) -> tuple[Segments, dict[Atom, Col]]:
    """As ``atoms.columnar`` grounds them: value atoms as object columns, 0 under unknown."""
    rows = [v for t in trs for v in t]
    cols: dict[Atom, Col] = {}
    for a in (CALLED, ARG, CTX, COUNT):
        vals = [r[a] for r in rows]
        unknown = np.array([x is None for x in vals], dtype=bool)
        if a is CALLED:
            value = np.array(vals, dtype=bool)
        elif a is COUNT:
            value = np.array([0 if x is None else x for x in vals], dtype=np.float64)
        else:
            value = np.empty(len(vals), dtype=object)
            value[:] = [0 if x is None else x for x in vals]
        cols[a] = Col(value, unknown)
    return Segments.from_lengths([len(t) for t in trs]), cols


PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(FORMULAS, st.lists(traces(), min_size=1, max_size=4))
def test_columnar_values_match_reference(f: Formula, trs: list[list[Valuation]]) -> None:
    seg, cols = table(trs)
    ev = Evaluator(seg, cols)
    for g in subformulas(f):
        col = ev.values(g)
        for s, t in enumerate(trs):
            first = int(seg.first[s])
            got = [
                True if col.lo[i] else None if col.hi[i] else False
                for i in range(first, first + len(t))
            ]
            assert got == reference.values(g, t), (g, t)


@PROPS
@given(FORMULAS, traces())
def test_monitor_matches_reference(f: Formula, tr: list[Valuation]) -> None:
    assert monitor_check(f, tr) == reference.check(f, tr)


def test_by_hand() -> None:
    """tau2_bench's rule: the new payment method must differ from the original one."""
    rule = Always(Implies(CALLED, Not(Cmp("==", ARG, CTX))))
    same = [{CALLED: True, ARG: "pm_1", CTX: "pm_1", COUNT: 1}]
    other = [{CALLED: True, ARG: "pm_2", CTX: "pm_1", COUNT: 1}]
    unset = [{CALLED: True, ARG: "pm_2", CTX: None, COUNT: 1}]
    typed = [{CALLED: True, ARG: 5, CTX: "5", COUNT: 1}]  # a number is not its text
    assert [reference.holds(rule, t) for t in (same, other, unset, typed)] == [
        False,
        True,
        None,
        True,
    ]
