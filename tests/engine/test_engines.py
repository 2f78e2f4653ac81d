"""The two engines agree end to end (SEMANTICS.md §1 views, §4.2 verdicts, §5 atoms).

Random events tables (several traces and agents, every event type, args
missing or present) × contracts from the pattern library (agent-filtered,
per-agent, with assumptions, first_match) → the columnar engine's
verdicts and violations equal the reference engine's, row for row.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.engine import columnar_raw, reference_raw
from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ltl import patterns
from sponsio_audit.ltl.contract import Clause, Contract
from sponsio_audit.ltl.parse import parse
from sponsio_audit.verdicts import build_tables


def _c(cid: str, name: str, args: Any, agent: str = "*", **kw: Any) -> Contract:
    r = patterns.build(name, args)
    return Contract(cid, agent, (r.clause(),), per_agent=r.per_agent, **kw)


CONTRACTS = (
    _c("precede", "must_precede", ["check", "refund"]),
    _c("rate", "rate_limit", ["refund", 1]),
    _c("deadline", "deadline", ["check", "refund", 2]),
    _c("followed", "always_followed_by", ["refund", "notify"]),
    _c("bash", "arg_blacklist", ["bash", "cmd", ["rm\\s+-rf"]]),
    _c("scope", "scope_limit", ["bash", ["/work"]]),
    _c("budget", "token_budget", [50]),
    _c("pii", "no_pii", []),
    _c("bot_only", "must_precede", ["check", "refund"], agent="bot"),
    _c("sod", "segregation_of_duty", ["check", "refund"]),
    _c("perm", "requires_permission", ["refund", "approver"]),
    _c("loop", "loop_detection", ["refund", 1]),  # a run over tool calls only
    # ∨/∧/¬ of tool atoms read from one lookup table over the tool codes (Evaluator.coded)
    _c("allow", "tool_allowlist", [["check", "notify", "login", "bash"]]),
    Contract(
        "either",
        "*",
        (
            Clause(parse("G((called(refund) | called(bash)) -> O called(check))")),
            Clause(parse("G(!(called(notify) & !called(login)) | called(check))")),
        ),
    ),
    Contract(  # a run over a mixed view: LLM responses are positions that end it
        "loop_mixed",
        "*",
        (
            Clause(parse("G(called(refund) -> consecutive_count(refund) <= 1)")),
            Clause(parse("G !llm_said(ssn)")),
        ),
    ),
    Contract(
        "after_login",
        "*",
        (Clause(parse("G(called(refund) -> O called(check))")), Clause(parse("F called(notify)"))),
        assumptions=(Clause(parse("called(login)")),),
        activate_at="first_match",
    ),
    Contract(
        "assume_global",
        "*",
        (Clause(parse("G(count(refund) <= 2)")),),
        assumptions=(Clause(parse("F called(login)")),),
    ),
)
PERMS = {"bot": frozenset({"approver"})}

_TOOL = st.tuples(
    st.just("tool_call"),
    # None: a call whose tool was not recorded (every tool atom unknown there, §5)
    st.sampled_from(["check", "refund", "notify", "login", "bash", "mcp__x__Refund", None]),
    st.one_of(
        st.none(),
        st.sampled_from(
            [{}, {"cmd": "ls /work/a"}, {"cmd": "rm -rf /"}, {"path": "/etc/passwd"}, {"n": 1}]
        ),
    ),
)
_LLM = st.tuples(
    st.just("llm_response"),
    st.one_of(st.none(), st.integers(0, 40)),
    st.one_of(st.none(), st.sampled_from(["fine", "ssn 123-45-6789", ""])),
)
TRACES = st.lists(
    st.lists(st.tuples(st.one_of(_TOOL, _LLM), st.sampled_from(["bot", "helper"])), max_size=10),
    min_size=1,
    max_size=5,
).filter(lambda ts: any(ts))


def _table(traces: list[list[Any]]) -> pa.Table:
    rows = []
    for t, events in enumerate(traces):
        for seq, (ev, agent) in enumerate(events):
            row: dict[str, Any] = {f.name: None for f in EVENT_SCHEMA}
            row.update(trace_id=f"t{t}", seq=seq, type=ev[0], agent=agent, inferred=False)
            row.update(span_id=f"s{t}.{seq}", file_id=1, record=seq)
            if ev[0] == "tool_call":
                row.update(
                    tool=ev[1], args=None if ev[2] is None else __import__("json").dumps(ev[2])
                )
            else:
                row.update(tokens_total=ev[1], content=ev[2])
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)


def _key(t: pa.Table) -> list[dict[str, Any]]:
    return sorted(
        t.to_pylist(),
        key=lambda r: (
            r["trace_id"],
            r["contract_id"],
            r["guarantee"],
            r.get("seq") if r.get("seq") is not None else -1,
        ),
    )


@settings(max_examples=200)
@given(TRACES)
def test_columnar_engine_equals_reference_engine(traces):
    events = _table(traces)
    ref = build_tables(reference_raw(events, CONTRACTS, PERMS), events, CONTRACTS)
    col = build_tables(columnar_raw(events, CONTRACTS, PERMS), events, CONTRACTS)
    assert _key(col[0]) == _key(ref[0])
    assert _key(col[1]) == _key(ref[1])


def test_agent_contract_is_not_applicable_without_that_agent():
    events = _table([[(("tool_call", "refund", {}), "helper")]])
    for raw in (reference_raw(events, CONTRACTS, PERMS), columnar_raw(events, CONTRACTS, PERMS)):
        got = {r["contract_id"]: r["verdict"] for r in raw.to_pylist()}
        assert got["bot_only"] == "not_applicable"
        # the helper refunds without a check: the "*" contract sees it
        assert got["precede"] == "violated"
