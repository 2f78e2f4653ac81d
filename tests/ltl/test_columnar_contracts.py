"""Columnar contract verdicts against ``contract.judge`` (SEMANTICS.md §4.2) and views (§1)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings

from sponsio_audit.atoms.columnar import ground_columns
from sponsio_audit.atoms.view import build_view, trace_index
from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.columnar import contract_verdicts, evaluate_contracts
from sponsio_audit.ltl.contract import Clause, Contract, judge
from sponsio_audit.ltl.parse import parse
from tests.ltl import columnar_strategies as S
from tests.ltl.columnar_strategies import contracts, many_traces, table


@settings(max_examples=250)
@given(contracts(), many_traces())
def test_verdicts_match_judge(contract, traces):
    seg, cols = table(traces)
    got = contract_verdicts(contract, seg, cols, checker=reference.check)
    for s, t in enumerate(traces):
        assert got.verdicts(s) == judge(contract, t), (contract, t)


def _events(rows: list[tuple[str, str, str, str | None]]) -> pa.Table:
    """An events table from (trace_id, type, agent, tool) rows, seq in row order."""
    cols: dict[str, list] = {f.name: [None] * len(rows) for f in EVENT_SCHEMA}
    cols["trace_id"] = [r[0] for r in rows]
    cols["seq"] = list(range(len(rows)))
    cols["type"] = [r[1] for r in rows]
    cols["agent"] = [r[2] for r in rows]
    cols["tool"] = [r[3] for r in rows]
    cols["inferred"] = [False] * len(rows)
    return pa.Table.from_pydict(cols, schema=EVENT_SCHEMA)


EVENTS = _events(
    [
        ("t1", "llm_request", "x", None),
        ("t1", "tool_call", "x", "pay"),
        ("t1", "tool_call", "y", "pay"),
        ("t1", "llm_response", "x", None),
        ("t1", "tool_call", "x", "pay"),
        ("t2", "llm_request", "x", None),
        ("t3", "tool_call", "y", "approve"),
        ("t3", "tool_call", "x", "pay"),
    ]
)


def _contract(text: str, agent: str = "*", per_agent: bool = False) -> Contract:
    return Contract("c", agent, (Clause(parse(text)),), per_agent=per_agent)


def test_view_selects_types_and_agent():
    trace, n = trace_index(EVENTS.column("trace_id"))
    assert trace.tolist() == [0, 0, 0, 0, 0, 1, 2, 2] and n == 3
    v = build_view(EVENTS, _contract("G(called(pay) -> count(pay) <= 1)"))
    assert v.rows.tolist() == [1, 2, 4, 6, 7]
    assert v.segments.lengths.tolist() == [3, 0, 2]
    v = build_view(EVENTS, _contract("G called(pay)", agent="x"))
    assert v.rows.tolist() == [1, 4, 7]
    assert v.segments.lengths.tolist() == [2, 0, 1]


def test_per_agent_view_splits_traces_by_agent():
    v = build_view(EVENTS, _contract("G called(pay)", per_agent=True))
    assert v.rows.tolist() == [1, 4, 2, 7, 6]
    assert v.segments.lengths.tolist() == [2, 1, 0, 1, 1]
    assert v.trace.tolist() == [0, 0, 1, 2, 2]
    assert v.agent == ["x", "y", None, "x", "y"]


def test_evaluate_contracts_table():
    """Grounded over the whole table (count keeps its state across agents), sampled at the view."""
    rate = _contract("G(called(pay) -> count(pay) <= 1)")
    must = Contract(
        "m",
        "*",
        (
            Clause(parse("G(called(pay) -> O called(approve))")),
            Clause(parse("F called(x)"), skipped="judge"),
        ),
        assumptions=(Clause(parse("called(pay)")),),
        activate_at="first_match",
    )
    jobs = []
    for c in (rate, must):
        view = build_view(EVENTS, c)
        cols = ground_columns(EVENTS, c.atoms())
        jobs.append((c, view, cols))
    table = evaluate_contracts(jobs, checker=reference.check)
    for r in table.to_pylist():  # row numbers of the same events in the events table
        view = jobs[0][1] if r["contract"] == "c" else jobs[1][1]
        first = view.segments.first[r["trace"]]
        assert r["offending_rows"] == [int(view.rows[first + p]) for p in r["offending"]]
        assert r["blame_row"] == (None if r["blame"] is None else view.rows[first + r["blame"]])
    out = table.to_pylist()
    rows = [
        (
            r["trace"],
            r["contract"],
            r["guarantee"],
            r["verdict"],
            r["kind"],
            r["blame"],
            r["offending"],
            r["reason"],
        )
        for r in out
    ]
    assert rows == [
        (0, "c", 0, "violated", "guarantee", 1, [1, 2], None),
        (1, "c", 0, "pass", None, None, [], None),
        (2, "c", 0, "pass", None, None, [], None),
        (0, "m", 0, "violated", "guarantee", 0, [0, 1, 2], None),
        (0, "m", 1, "skipped", None, None, [], "judge"),
        (1, "m", 0, "not_applicable", None, None, [], None),
        (1, "m", 1, "skipped", None, None, [], "judge"),
        # approve came before k*: O sees it (SEMANTICS.md §4.2, evaluation at k*)
        (2, "m", 0, "pass", None, None, [], None),
        (2, "m", 1, "skipped", None, None, [], "judge"),
    ]


def test_first_match_positions_are_in_the_view():
    c = Contract(
        "a",
        "*",
        (Clause(parse("G(called(b) -> O called(a))")),),
        assumptions=(Clause(S.C),),
        activate_at="first_match",
    )
    ev = [
        {S.A: a, S.B: b, S.C: cc, S.COUNT: 0}
        for a, b, cc in [(False, False, False), (False, False, True), (False, True, False)]
    ]
    got = contract_verdicts(c, *table([ev]))
    assert got.verdicts(0) == judge(c, ev)
    assert got.verdicts(0)[0].blame == 2
    ev[0][S.A] = True  # an a before k* is seen by O: evaluation at k* on the whole view
    got = contract_verdicts(c, *table([ev]))
    assert got.verdicts(0) == judge(c, ev)
    assert got.verdicts(0)[0].verdict == "pass"


def test_no_contracts_gives_an_empty_table():
    assert evaluate_contracts([]).num_rows == 0


def test_global_assumption_unknown():
    c = Contract(
        "u",
        "*",
        (Clause(parse("G called(a)")),),
        assumptions=(Clause(parse("G called(b)")),),
    )
    ev = [{S.A: False, S.B: None, S.C: False, S.COUNT: 0}]
    got = contract_verdicts(c, *table([ev]))
    assert got.verdicts(0) == judge(c, ev)
    assert got.verdicts(0)[0].verdict == "unverifiable"
    assert np.all(got.reason == 0)


def test_atom_columns_are_taken_lazily():
    c = _contract("G called(pay)")
    view = build_view(EVENTS, c)
    cols = ground_columns(EVENTS, [Atom("called", ("pay",))])
    table_ = evaluate_contracts([(c, view, cols)])
    assert table_.column("verdict").to_pylist() == ["pass", "pass", "violated"]


def test_a_first_match_guarantee_false_at_activation_is_blamed_there():
    """A guarantee that is no ``G ψ`` (``called(b)``, ``Y called(b)``) is evaluated at k*
    (§4.2): false there, the prefix up to k* is already bad, so it is a guarantee violation
    blamed at k*, not an obligation reported open at the end of the trace (liveness)."""
    ev = [
        {S.A: False, S.B: False, S.C: c, S.COUNT: 0} for c in (False, True, False, False)
    ]  # k* = 1
    for text in ("called(b)", "Y called(b)", "!called(a) & called(b)"):
        c = Contract(
            "k", "*", (Clause(parse(text)),), assumptions=(Clause(S.C),), activate_at="first_match"
        )
        (v,) = judge(c, ev)
        assert (v.verdict, v.kind, v.blame) == ("violated", "guarantee", 1), text
        assert contract_verdicts(c, *table([ev])).verdicts(0) == [v]
