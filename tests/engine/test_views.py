"""The view of a contract (SEMANTICS.md §1) in both engines, and the guard that agrees.

A contract over tool atoms sees only tool calls: inserting LLM events
anywhere in a trace changes none of its verdicts, neither their kind nor the
events blamed (the same tool calls, at their new rows). This is the property
that caught ``consecutive_count`` counting LLM events as positions (a wrong
pass of ``loop_detection``). A contract that also reads LLM output sees the
LLM events, and there a response does end a run of calls (§5).
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.engine import columnar_raw, reference_raw
from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.guard import Guard
from sponsio_audit.ltl import patterns
from sponsio_audit.ltl.contract import Clause, Contract
from sponsio_audit.ltl.parse import parse

ENGINES = (reference_raw, columnar_raw)


def _pattern(cid: str, name: str, args: Any, agent: str = "*", **kw: Any) -> Contract:
    r = patterns.build(name, args)
    return Contract(cid, agent, (r.clause(),), per_agent=r.per_agent, **kw)


def _formula(cid: str, *texts: str, **kw: Any) -> Contract:
    return Contract(cid, "*", tuple(Clause(parse(t)) for t in texts), **kw)


TOOL_CONTRACTS = (
    _pattern("loop", "loop_detection", ["s", 1]),
    _pattern("loop2", "loop_detection", ["s", 2]),
    _pattern("retry", "bounded_retry", ["s", 1]),
    _pattern("cool", "cooldown", ["s", 2]),
    _pattern("step", "workflow_step", ["a", "s"]),
    _pattern("deadline", "deadline", ["a", "s", 2]),
    _pattern("fresh", "approval_freshness", ["a", "s", 1]),
    _pattern("precede", "must_precede", ["a", "s"]),
    _pattern("rate", "rate_limit", ["s", 2]),
    _pattern("sod", "segregation_of_duty", ["a", "s"]),
    _pattern("bot_loop", "loop_detection", ["s", 1], agent="bot"),
    _pattern("args", "arg_blacklist", ["s", "cmd", ["rm"]]),
    _formula("next", "G(called(a) -> X called(s))", "F(consecutive_count(s) >= 2)"),
    _formula("run_or", "G(consecutive_count(s) <= 1 | O[1] called(a))"),
    _formula(
        "after_a",
        "G(called(s) -> consecutive_count(s) <= 1)",
        assumptions=(Clause(parse("called(a)")),),
        activate_at="first_match",
    ),
)
PERMS: dict[str, frozenset[str]] = {}

CALLS = st.tuples(
    st.just("tool_call"),
    st.sampled_from(["s", "s", "a", "x", None]),  # None: a call with no recorded tool
    st.sampled_from([{}, {"cmd": "rm -rf"}, None]),
)
LLM = st.tuples(
    st.sampled_from(["llm_request", "llm_response"]),
    st.sampled_from(["fine", "a secret"]),
    st.one_of(st.none(), st.integers(0, 9)),
)
AGENTS = st.sampled_from(["bot", "helper"])
TOOL_TRACES = st.lists(
    st.lists(st.tuples(CALLS, AGENTS), min_size=1, max_size=8), min_size=1, max_size=4
)


def _table(traces: list[list[Any]]) -> pa.Table:
    rows = []
    for t, events in enumerate(traces):
        for seq, (ev, agent) in enumerate(events):
            row: dict[str, Any] = {f.name: None for f in EVENT_SCHEMA}
            row.update(trace_id=f"t{t}", seq=seq, type=ev[0], agent=agent, inferred=False)
            row.update(span_id=f"s{t}.{seq}", file_id=1, record=seq, start_ns=seq)
            if ev[0] == "tool_call":
                row.update(tool=ev[1], args=None if ev[2] is None else json.dumps(ev[2]))
            elif ev[0] == "llm_request":
                row.update(prompt=ev[1], tokens_total=ev[2])
            else:
                row.update(content=ev[1], tokens_total=ev[2])
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)


def _verdicts(raw: pa.Table, tool_row: list[int]) -> list[tuple[Any, ...]]:
    """Every verdict, its events named by their row in the tool-only table."""

    def at(row: int | None) -> int | None:
        return None if row is None else tool_row[row]

    return sorted(
        (
            r["trace_id"],
            r["contract_id"],
            r["guarantee"],
            r["verdict"],
            r["kind"],
            at(r["blame_row"]),
            at(r["opened_row"]),
            tuple(at(x) for x in r["offending_rows"]),
        )
        for r in raw.to_pylist()
    )


@st.composite
def with_llm_events(draw: Any, traces: list[list[Any]]) -> tuple[list[list[Any]], list[int]]:
    """``traces`` with LLM events inserted anywhere, and for each row of the new table the
    row of the same tool call in the old one (-1 for an LLM event). An LLM event's agent
    is one the trace has already (§4.2: an agent with no event is not_applicable)."""
    out, rows, old = [], [], 0
    for events in traces:
        new: list[Any] = []
        agents = st.sampled_from(sorted({agent for _, agent in events}))
        for k in range(len(events) + 1):
            for llm in draw(st.lists(st.tuples(LLM, agents), max_size=2)):
                new.append(llm)
                rows.append(-1)
            if k < len(events):
                new.append(events[k])
                rows.append(old)
                old += 1
        out.append(new)
    return out, rows


@settings(max_examples=60, deadline=None)
@given(TOOL_TRACES.flatmap(lambda trs: st.tuples(st.just(trs), with_llm_events(trs))))
def test_llm_events_never_change_the_verdicts_of_a_tool_contract(case: Any) -> None:
    """§1: a tool contract's view is its tool calls, in both engines."""
    traces, (mixed, tool_row) = case
    plain, noisy = _table(traces), _table(mixed)
    for engine in ENGINES:
        want = _verdicts(engine(plain, TOOL_CONTRACTS, PERMS), list(range(plain.num_rows)))
        assert _verdicts(engine(noisy, TOOL_CONTRACTS, PERMS), tool_row) == want, engine


def _one(trace: list[Any], contract: Contract) -> list[tuple[str, int | None]]:
    """(verdict, blame row) of every guarantee, by each engine (they must agree)."""
    table = _table([[(ev, "bot") for ev in trace]])
    got = []
    for engine in ENGINES:
        rows = sorted(engine(table, [contract], PERMS).to_pylist(), key=lambda r: r["guarantee"])
        got.append([(r["verdict"], r["blame_row"]) for r in rows])
    assert got[0] == got[1]
    return got[0]


S = ("tool_call", "s", {})
RESP = ("llm_response", "fine", 3)
REQ = ("llm_request", "go on", 3)


def test_a_tool_contract_counts_a_run_across_llm_turns() -> None:
    """§5 by hand: the view of loop_detection(s, 2) is the three calls of s, a run of 3 at
    the third (row 8): violated there."""
    trace = [REQ, RESP, S, REQ, RESP, S, REQ, RESP, S]
    assert _one(trace, _pattern("loop", "loop_detection", ["s", 2])) == [("violated", 8)]
    assert _one(trace[:-1], _pattern("loop", "loop_detection", ["s", 2])) == [("pass", None)]


def test_in_a_mixed_view_an_llm_response_ends_the_run() -> None:
    """§1, §5 by hand: a contract that also reads LLM output sees s, resp, s, s: the runs
    at the calls are 1, 1, 2, so consecutive_count(s) <= 1 fails at the last call only
    (row 3), and the LLM guarantee holds."""
    c = _formula("mixed", "G(called(s) -> consecutive_count(s) <= 1)", "G !llm_said(secret)")
    assert _one([S, RESP, S, S], c) == [("violated", 3), ("pass", None)]
    # an LLM request is outside this view (llm_said reads responses): it does not end it
    assert _one([S, REQ, S], c) == [("violated", 2), ("pass", None)]
    assert _one([S, RESP, S], c) == [("pass", None), ("pass", None)]


def test_the_guard_blocks_where_the_audit_of_its_session_blames() -> None:
    """§4.2: the guard sees tool calls only; the audit of the same session with its LLM
    turns recorded blames the call the guard blocked (the third s in a row)."""
    c = _pattern("loop", "loop_detection", ["s", 2])
    guard = Guard([c], agent_id="bot", session_log=False, exporter=False)
    allowed = [guard.guard_before("s").allowed for _ in range(3)]
    guard.close()
    assert allowed == [True, True, False]
    assert _one([REQ, RESP, S, REQ, RESP, S, REQ, RESP, S], c) == [("violated", 8)]
