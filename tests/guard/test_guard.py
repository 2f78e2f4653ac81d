"""Unit tests of the guard: strategies, decorator, guard_after, first_match, finish, threads."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.guard import Decision, Guard, ToolBlocked
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.contract import Contract

from .helpers import contract

PRECEDE = "G(called(pay) -> O called(verify))"


def guard(*cs: Contract, **kw: Any) -> Guard:
    kw.setdefault("session_log", False)
    kw.setdefault("exporter", False)
    return Guard(list(cs), "bot", **kw)


def test_block_is_not_appended() -> None:
    g = guard(contract("p", PRECEDE))
    d = g.guard_before("pay", {"amount": 3})
    assert (d.allowed, d.action, d.position) == (False, "blocked", 0)
    (v,) = d.violations
    assert (v.contract_id, v.kind, v.severity, v.strategy) == ("p", "guarantee", "high", "block")
    assert g.guard_before("verify", {}).position == 0
    assert g.guard_before("pay", {}).action == "allowed"
    assert g.position == 2


def test_rate_limit_counts_only_calls_let_through() -> None:
    g = guard(contract("r", "G(called(t) -> count(t) <= 2)"))
    acts = [g.guard_before("t", {}).action for _ in range(5)]
    assert acts == ["allowed", "allowed", "blocked", "blocked", "blocked"]


def test_warn_records_every_offence() -> None:
    g = guard(contract("r", "G(called(t) -> count(t) <= 1)", strategy="warn"))
    acts = [g.guard_before("t", {}).action for _ in range(3)]
    assert acts == ["allowed", "warned", "warned"]
    assert g.position == 3


def test_escalate_default_denies_and_callback_allows() -> None:
    c = contract("e", PRECEDE, strategy="escalate")
    d = guard(c).guard_before("pay", {})
    assert (d.allowed, d.action) == (False, "blocked")
    assert "escalation denied" in d.violations[0].message
    seen: list[Decision] = []

    def approve(dec: Decision) -> bool:
        seen.append(dec)
        return True

    g = guard(c, escalate=approve)
    d = g.guard_before("pay", {})
    assert (d.allowed, d.action, g.position) == (True, "escalated", 1)
    assert seen[0].action == "escalated"
    boom = guard(c, escalate=lambda dec: 1 / 0)
    assert boom.guard_before("pay", {}).action == "blocked"


def test_strictest_wins() -> None:
    w = contract("w", "G(!called(x))", strategy="warn")
    r = contract("r", "G(!called(x))", strategy="redirect", safe_tool="y")
    b = contract("b", "G(!called(x))", strategy="block")
    assert guard(w, r).guard_before("x", {}).action == "redirected"
    assert guard(w, r, b).guard_before("x", {}).action == "blocked"
    e = contract("e", "G(!called(x))", strategy="escalate")
    d = guard(w, r, e, escalate=lambda _: True).guard_before("x", {})
    assert (d.action, d.redirected_to) == ("redirected", "y")
    nosafe = contract("n", "G(!called(x))", strategy="redirect")
    assert guard(nosafe).guard_before("x", {}).action == "blocked"


def test_observe_allows_and_says_what_it_would_do() -> None:
    g = guard(contract("p", PRECEDE, strategy="redirect", safe_tool="log"), mode="observe")
    d = g.guard_before("pay", {})
    assert (d.allowed, d.action, d.would_have, g.position) == (True, "observed", "redirected", 1)


def test_agent_and_view_filter_and_skips() -> None:
    other = contract("o", "G(!called(x))", agent="someone_else")
    llm = contract("l", "G(!llm_output_contains('x'))")
    fm = contract(
        "f", "G(!called(x))", assumptions=["F(called(y) & X called(z))"], activate_at="first_match"
    )
    g = guard(other, llm, fm)
    assert g.contract_ids == ()
    assert [s[0] for s in g.skipped] == ["f"]
    assert g.guard_before("x", {}).action == "allowed"


def test_first_match_as_the_audit_evaluates_it() -> None:
    """SEMANTICS.md §4.2: ``F φ`` activates at the first φ, and the guarantee is evaluated at
    k* on the whole view, so a past operator sees the events before k*."""
    c = contract("f", "G(!called(x))", assumptions=["F called(y)"], activate_at="first_match")
    g = guard(c)
    assert g.contract_ids == ("f",)
    assert g.guard_before("x", {}).allowed  # before the first y: not active
    assert g.guard_before("y", {}).allowed
    assert g.guard_before("x", {}).action == "blocked"
    p = contract(
        "p", "G(called(b) -> O called(a))", assumptions=["called(s)"], activate_at="first_match"
    )
    g = guard(p)
    assert [g.guard_before(t, {}).action for t in ("a", "s", "b")] == ["allowed"] * 3
    g = guard(p)
    assert [g.guard_before(t, {}).action for t in ("s", "b")] == ["allowed", "blocked"]


def test_first_match_activation_and_rollback() -> None:
    c = contract("f", "G(!called(x))", assumptions=["called(start)"], activate_at="first_match")
    g = guard(c, contract("b", "G(!called(start))", strategy="block"))
    assert g.guard_before("x", {}).allowed  # not active yet
    assert g.guard_before("start", {}).action == "blocked"  # activation rolled back
    assert g.guard_before("x", {}).allowed
    g2 = guard(c)
    assert g2.guard_before("start", {}).allowed
    assert g2.guard_before("x", {}).action == "blocked"


def test_mcp_prefix_and_case_are_grounded() -> None:
    g = guard(contract("r", "G(!called(issue_refund))"))
    assert g.guard_before("mcp__fin__Issue_Refund", {}).action == "blocked"


def test_guard_after_checks_output_post_hoc() -> None:
    g = guard(contract("o", "G(!output_has(fetch, 'SECRET'))"))
    d = g.guard_before("fetch", {"url": "u"})
    assert d.action == "allowed"  # the result is still missing: unknown
    d2 = g.guard_after(d, "here is a SECRET")
    assert (d2.allowed, d2.action, d2.seq) == (True, "warned", d.seq)
    assert d2.violations[0].contract_id == "o"
    d3 = g.guard_before("fetch", {})
    assert g.guard_after(d3, "fine").action == "allowed"


def test_finish_reports_liveness() -> None:
    g = guard(contract("l", "G(called(open) -> F called(close))"))
    g.guard_before("open", {})
    (d,) = g.finish()
    assert d.violations[0].kind == "liveness" and d.action == "warned"
    g2 = guard(contract("l", "G(called(open) -> F called(close))"))
    g2.guard_before("open", {})
    g2.guard_before("close", {})
    assert g2.finish() == []


def test_decorator_sync_blocks_and_redirects() -> None:
    log: list[dict[str, Any]] = []

    def log_refund(**kw: Any) -> str:
        log.append(kw)
        return "logged"

    g = guard(
        contract("p", PRECEDE),
        contract("r", "G(!called(refund))", strategy="redirect", safe_tool="log_refund"),
        tools={"log_refund": log_refund},
    )

    @g.guarded
    def pay(amount: int, password: str = "") -> str:
        return f"paid {amount}"

    @g.guarded
    def verify() -> str:
        return "ok"

    @g.guarded
    def refund(order: str) -> str:
        raise AssertionError("must not run")

    with pytest.raises(ToolBlocked) as e:
        pay(3, password="hunter2")
    assert e.value.decision.args == {"amount": 3, "password": "<redacted>"}
    assert verify() == "ok"
    assert pay(5) == "paid 5"
    assert refund(order="o1") == "logged"
    assert log == [{"order": "o1"}]
    assert [d.tool for d in g.decisions] == ["pay", "verify", "pay", "refund", "log_refund"]


def test_decorator_async() -> None:
    g = guard(contract("p", PRECEDE))

    @g.guarded(name="pay")
    async def pay_tool(amount: int) -> str:
        await asyncio.sleep(0)
        return "paid"

    @g.guarded
    async def verify() -> str:
        return "ok"

    async def run() -> list[str]:
        out = []
        try:
            await pay_tool(1)
        except ToolBlocked as e:
            out.append(e.decision.action)
        out.append(await verify())
        out.append(await pay_tool(2))
        return out

    assert asyncio.run(run()) == ["blocked", "ok", "paid"]


def test_threads_count_equals_allowed_calls() -> None:
    g = guard(contract("r", "G(called(t) -> count(t) <= 150)"))
    results: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(25):
            d = g.guard_before("t", {})
            with lock:
                results.append(d.allowed)

    ts = [threading.Thread(target=worker) for _ in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(results) == 400 and sum(results) == 150 == g.position
    val = g.grounder.ground(
        __import__("sponsio_audit.event", fromlist=["Event"]).Event("tool_call", tool="t")
    )
    assert val[Atom("count", ("t",))] == 151  # the 150 allowed calls plus this probe


def test_session_log_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPONSIO_SESSIONS_DIR", str(tmp_path))
    monkeypatch.delenv("SPONSIO_SESSION_LOG", raising=False)
    cs = [contract("p", PRECEDE), contract("w", "G(!called(ls))", strategy="warn")]
    with Guard(cs, "../evil/agent\x00", exporter=False) as g:
        g.guard_before("pay", {"token": "abc", "n": [{"api_key": "k"}]})
        g.guard_before("ls", {})
    path = g.session_log_path
    assert path is not None and path.parent.parent == tmp_path
    assert path.parent.name == "evil_agent" and path.suffix == ".jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 4
    first = lines[0]
    assert first["action"] == "pay" and first["args"] == {
        "token": "<redacted>",
        "n": [{"api_key": "<redacted>"}],
    }
    assert (first["contract_id"], first["result"], first["seq"]) == ("p", "blocked", 0)
    assert first["constraint"] == "G(called(pay) -> O called(verify))"
    assert first["ts"].endswith("Z") and len(first["ts"]) == 27
    assert [x["result"] for x in lines] == ["blocked", "allowed", "allowed", "warned"]
    assert lines[0]["ts"] == lines[1]["ts"] != lines[2]["ts"]


def test_session_log_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPONSIO_SESSIONS_DIR", str(tmp_path))
    monkeypatch.setenv("SPONSIO_SESSION_LOG", "0")
    g = Guard([contract("p", PRECEDE)], "bot", exporter=False)
    g.guard_before("pay", {})
    g.finish()
    assert g.session_log_path is None and not any(tmp_path.iterdir())
