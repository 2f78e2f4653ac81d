"""End to end: events table → columnar grounding → views → columnar verdicts, against
the online grounding and ``contract.judge`` trace by trace (SEMANTICS.md §1, §4.2, §6).

Covers what the unit tests cannot: views that drop event types while
stateful atoms keep counting over every event, agent-filtered contracts,
per-agent contracts (each (trace, agent) a trace of its own), traces with
no event in a view, and first_match activation on grounded atoms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.atoms.columnar import ground_columns
from sponsio_audit.atoms.online import Grounder
from sponsio_audit.atoms.view import Views, trace_index, view_types
from sponsio_audit.event import EVENT_SCHEMA, Event, event_from_row
from sponsio_audit.ltl import patterns, reference
from sponsio_audit.ltl.columnar import evaluate_contracts
from sponsio_audit.ltl.contract import Clause, Contract, judge
from sponsio_audit.ltl.parse import parse


def _contract(cid: str, name: str, args: Any, agent: str = "*", **kw: Any) -> Contract:
    r = patterns.build(name, args)
    return Contract(cid, agent, (r.clause(),), per_agent=r.per_agent, **kw)


CONTRACTS = (
    _contract("precede", "must_precede", ["a", "b"]),
    _contract("rate", "rate_limit", ["b", 2]),
    _contract("deadline", "deadline", ["a", "b", 2]),
    _contract("workflow", "workflow_step", ["a", "b"]),
    _contract("cooldown", "cooldown", ["c", 2]),
    _contract("followed", "always_followed_by", ["a", "c"]),
    _contract("budget", "token_budget", [100]),
    _contract("precede_x", "must_precede", ["a", "b"], agent="x"),
    _contract("sod", "segregation_of_duty", ["a", "b"]),
    Contract(
        "after_c",
        "*",
        (Clause(parse("G(called(b) -> O called(a))")), Clause(parse("G count(b) <= 1"))),
        assumptions=(Clause(parse("called(c)")),),
        activate_at="first_match",
    ),
)

_EVENT = st.one_of(
    st.tuples(st.just("tool_call"), st.sampled_from("abc")),
    st.tuples(st.just("llm_response"), st.one_of(st.none(), st.integers(0, 60))),
)
TABLES = st.lists(  # a table has no empty traces (a trace is its events)
    st.lists(st.tuples(_EVENT, st.sampled_from("xy")), min_size=1, max_size=8),
    min_size=1,
    max_size=4,
)


def _table(traces: list[list[Any]]) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for t, events in enumerate(traces):
        for seq, ((kind, x), agent) in enumerate(events):
            tool = x if kind == "tool_call" else None
            tokens = x if kind == "llm_response" else None
            row: dict[str, Any] = {f.name: None for f in EVENT_SCHEMA}
            row.update(trace_id=f"t{t}", seq=seq, type=kind, agent=agent, tool=tool)
            row.update(tokens_total=tokens, inferred=False, content="ok" * (kind != "tool_call"))
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)


def _columnar(table: pa.Table, c: Contract) -> pa.Table:
    """What the api does per contract: filter or regroup by agent, ground, view, evaluate."""
    trace, n = trace_index(table.column("trace_id"))
    if c.agent != "*":
        keep = np.asarray(pc.equal(table.column("agent"), c.agent).to_numpy(zero_copy_only=False))
        table, trace = table.filter(pa.array(keep)), trace[keep]
    grounded = table
    if c.per_agent:  # stateful atoms run per (trace, agent): regroup, key the grounding by both
        order = np.lexsort((np.arange(table.num_rows), table.column("agent").to_numpy(), trace))
        table, trace = table.take(pa.array(order)), trace[order]
        key = pc.binary_join_element_wise(table.column("trace_id"), table.column("agent"), "/")
        grounded = table.set_column(0, "trace_id", key)
    cols = ground_columns(grounded, c.atoms())
    return evaluate_contracts([(c, Views(table, trace, n).of(c), cols)], reference.check)


def _online(events: list[Event], c: Contract) -> list[Any]:
    g = Grounder(c.atoms())
    types = view_types(c)
    grounded = [(e.type in types, g.ground(e)) for e in events]
    return judge(c, [v for keep, v in grounded if keep])


@settings(max_examples=100)
@given(TABLES)
def test_contracts_end_to_end(traces):
    table = _table(traces)
    events = [event_from_row(r) for r in table.to_pylist()]
    by_trace = {f"t{t}": [e for e in events if e.trace_id == f"t{t}"] for t in range(len(traces))}
    for c in CONTRACTS:
        got: dict[tuple[int, str | None], list[tuple]] = {}
        for r in _columnar(table, c).to_pylist():
            got.setdefault((r["trace"], r["agent"]), []).append(
                (r["verdict"], r["kind"], r["blame"], tuple(r["offending"]), r["opened"])
            )
        for t in range(len(traces)):
            evs = by_trace[f"t{t}"]
            if c.agent != "*":
                evs = [e for e in evs if e.agent == c.agent]
            groups: dict[str | None, list[Event]] = {None: evs}
            if c.per_agent:
                seen = list(dict.fromkeys(e.agent for e in evs))
                groups = {a: [e for e in evs if e.agent == a] for a in seen}
            for agent, group in groups.items():
                want = [
                    (v.verdict, v.kind, v.blame, v.offending, v.opened) for v in _online(group, c)
                ]
                if (t, agent) in got:
                    assert got[(t, agent)] == want, (c.id, t, agent)
                else:  # a per-agent group with no event in the view: not a segment of its own
                    assert c.per_agent and not any(e.type == "tool_call" for e in group)
