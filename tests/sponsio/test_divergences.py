"""Where our verdict differs from Sponsio's on purpose, one test each, both sides shown.

The first two are the divergences SEMANTICS.md names for the differential
suite (§2, §5): a fact the trace did not record is *unknown* here and
*false* in Sponsio, and so is an ``arg_numeric`` value that is not a
number. The others are meanings SEMANTICS.md fixes differently from
Sponsio's runtime (§1 views, §5 argument text and tool names, §6 patterns,
§6.1 arg_value_range); the random differential suite keeps clear of them.
One test shows an agreement instead: LLM turns between repeated calls, which
once ended a run of consecutive_count here (a wrong pass of loop_detection).
"""

from __future__ import annotations

from typing import Any

from sponsio_audit.event import Event
from sponsio_audit.ltl import patterns
from sponsio_audit.ltl.contract import Clause, Contract
from sponsio_audit.ltl.parse import parse

from . import oracle


def call(tool: str, args: dict[str, Any] | None = None, **kw: Any) -> Event:
    return Event(type="tool_call", tool=tool, args={} if args is None else args,
                 agent=oracle.AGENT, **kw)  # fmt: skip


def no_args(tool: str) -> Event:
    return Event(type="tool_call", tool=tool, args=None, agent=oracle.AGENT)


def both(contract: Contract, theirs: Any, trace: list[Event]) -> tuple[str, str]:
    """(our outcome, Sponsio's outcome) of one contract on one trace."""
    ours = oracle.our_outcomes([trace], [contract], frozenset())[(0, contract.id)]
    agent = oracle.sponsio_agent()
    got = oracle.sponsio_outcome(theirs(agent), oracle.sponsio_trace(trace), {oracle.AGENT: agent})
    return ours, got


def formula_contract(text: str) -> tuple[Contract, Any]:
    f = parse(text)
    ours = Contract("c", "*", (Clause(f),))
    return ours, lambda agent: oracle.sponsio_contract(agent, [oracle.to_sponsio(f)])


def pattern_contract(name: str, args: list[Any]) -> tuple[Contract, Any]:
    r = patterns.build(name, args)
    ours = Contract("c", "*", (r.clause(),))
    return ours, lambda agent: oracle.sponsio_contract(agent, [oracle.sponsio_pattern(name, args)])


# ---------------------------------------------- the two the differential suite names


def test_missing_fact_is_unknown_here_and_false_there() -> None:
    """Arguments not recorded: we cannot tell whether bash ran ``rm -rf``; Sponsio says it
    did not (``arg_has`` is false), so its contract passes."""
    ours, theirs = formula_contract("G(called(bash) -> !arg_has(bash, rm))")
    assert both(ours, theirs, [call("ls"), no_args("bash")]) == ("unverifiable", "pass")
    # with the arguments recorded both sides agree
    assert both(ours, theirs, [call("bash", {"cmd": "rm x"})]) == ("violated", "violated")


def test_non_numeric_arg_numeric_is_unknown_here_and_zero_there() -> None:
    """``amount: "lots"`` is not a number: we cannot check the cap; Sponsio reads the
    missing value as 0, which is in range, and passes."""
    ours, theirs = pattern_contract("arg_value_range", ["pay", "amount", 0, 100])
    assert both(ours, theirs, [call("pay", {"amount": "lots"})]) == ("unverifiable", "pass")
    assert both(ours, theirs, [call("pay", {"amount": "500"})]) == ("violated", "violated")
    assert both(ours, theirs, [call("pay", {"amount": "50"})]) == ("pass", "pass")


# ---------------------------------------------- meanings SEMANTICS.md fixes otherwise


def test_arg_value_range_is_only_checked_at_calls_of_the_tool() -> None:
    """§6.1: Sponsio also checks the range at every other event, where the value is 0."""
    ours, theirs = pattern_contract("arg_value_range", ["pay", "amount", 1, 100])
    assert both(ours, theirs, [call("ls"), call("pay", {"amount": 5})]) == ("pass", "violated")


def test_bounded_retry_counts_calls_in_a_row() -> None:
    """§6: n retries = n + 1 calls in a row; Sponsio caps the total count at n."""
    ours, theirs = pattern_contract("bounded_retry", ["fetch", 1])
    trace = [call("fetch"), call("other"), call("fetch")]
    assert both(ours, theirs, trace) == ("pass", "violated")


def test_deadline_open_at_the_end_is_a_liveness_violation() -> None:
    """§6: a trace that ends before the window closes without b is a liveness violation;
    Sponsio's weak next lets it pass."""
    ours, theirs = pattern_contract("deadline", ["order", "ship", 3])
    assert both(ours, theirs, [call("order"), call("x")]) == ("violated", "pass")
    assert both(ours, theirs, [call("order"), call("x"), call("y"), call("z")]) == (
        "violated",
        "violated",
    )


def test_a_renewed_approval_renews_the_window() -> None:
    """§6.1: approval_freshness is G(c(t) → O[n] c(ap)): the latest approval counts.
    Sponsio closes the window n+1 steps after every approval, renewed or not."""
    ours, theirs = pattern_contract("approval_freshness", ["approve", "act", 1])
    trace = [call("approve"), call("approve"), call("act")]
    assert both(ours, theirs, trace) == ("pass", "violated")


def test_positions_are_positions_in_the_contract_view() -> None:
    """§1: a tool contract sees tool calls only; Sponsio's X also steps over the LLM turn."""
    ours, theirs = formula_contract("G(called(plan) -> X called(act))")
    llm = Event(type="llm_response", content="thinking", agent=oracle.AGENT, tokens_total=3)
    assert both(ours, theirs, [call("plan"), llm, call("act")]) == ("pass", "violated")


def llm(text: str = "thinking") -> Event:
    return Event(type="llm_response", content=text, agent=oracle.AGENT, tokens_total=3)


def turn() -> list[Event]:
    """One LLM turn (request and response): outside the view of a tool contract."""
    req = Event(type="llm_request", prompt="q", agent=oracle.AGENT, tokens_total=3)
    return [req, llm()]


def test_llm_turns_do_not_end_a_run_of_calls_in_a_tool_view() -> None:
    """§1, §5: a tool contract's positions are tool calls, so s, turn, s, turn, s is a run
    of three calls of s. Both sides agree (this was a wrong pass: the turns ended the run)."""
    ours, theirs = pattern_contract("loop_detection", ["s", 2])
    trace = [*turn(), call("s"), *turn(), call("s"), *turn(), call("s")]
    assert both(ours, theirs, trace) == ("violated", "violated")
    assert both(ours, theirs, trace[:-1]) == ("pass", "pass")
    # a call of another tool is a position of the view: it does end the run
    assert both(ours, theirs, [call("s"), *turn(), call("x"), call("s"), call("s")]) == (
        "pass",
        "pass",
    )


def test_bounded_retry_counts_calls_in_a_row_across_llm_turns() -> None:
    """§6: bounded_retry(t, 1) allows 2 calls in a row; the turns between them are not
    positions of the view (§1), so the third call is the third in a row. (Sponsio caps
    the total count, which is violated at the second call already.)"""
    ours, theirs = pattern_contract("bounded_retry", ["fetch", 1])
    assert both(ours, theirs, [call("fetch"), *turn(), call("fetch")]) == ("pass", "violated")
    three = [call("fetch"), *turn(), call("fetch"), llm(), call("fetch")]
    assert both(ours, theirs, three) == ("violated", "violated")


def test_an_llm_event_in_a_mixed_view_ends_a_run() -> None:
    """§1, §5: a contract that also reads LLM output sees the LLM events: there the
    response is a position that is not a call of s, so it ends the run (s, llm, s is two
    runs of one). Sponsio counts tool calls only, whatever the contract reads."""
    f = parse("G(called(s) -> consecutive_count(s) <= 1)")
    clean = parse("G !llm_output_contains(secret)")
    ours = Contract("c", "*", (Clause(f), Clause(clean)))

    def theirs(agent: Any) -> Any:
        return oracle.sponsio_contract(agent, [oracle.to_sponsio(f), oracle.to_sponsio(clean)])

    assert both(ours, theirs, [call("s"), llm(), call("s")]) == ("pass", "violated")
    # with no LLM event between them the calls are in a row on both sides
    assert both(ours, theirs, [call("s"), call("s"), llm()]) == ("violated", "violated")


def test_cooldown_counts_positions_of_the_view() -> None:
    """§1, §6: cooldown(s, 1) is G(c(s) → ¬Y O[0] c(s)): no call of s right after one,
    positions being tool calls; an LLM turn between the two calls does not make them
    apart. Sponsio's X steps over the LLM event and passes."""
    ours, theirs = pattern_contract("cooldown", ["s", 1])
    assert both(ours, theirs, [call("s"), llm(), call("s")]) == ("violated", "pass")
    # a call of another tool between them is a position: both pass
    assert both(ours, theirs, [call("s"), call("x"), call("s")]) == ("pass", "pass")


def test_arguments_are_matched_as_compact_json() -> None:
    """§5: args are matched as compact JSON; Sponsio searches the Python repr of the dict."""
    ours, theirs = formula_contract("""G(!arg_has(w, '"path":"/etc'))""")
    assert both(ours, theirs, [call("w", {"path": "/etc/x"})]) == ("violated", "pass")


def test_only_the_mcp_prefix_is_removed_from_tool_names() -> None:
    """§5: ``mcp__<server>__`` is removed; Sponsio also strips OpenClaw's ``<server>__``."""
    ours, theirs = formula_contract("G !called(refund)")
    assert both(ours, theirs, [call("fin__refund")]) == ("pass", "violated")
    assert both(ours, theirs, [call("mcp__fin__Refund")]) == ("violated", "violated")


# ---------------------------------------------- value terms (ArgValue, CtxValue) and evidence

PAYMENT = "G(called(pay) -> !(arg_value(pay, pm) == ctx_value(orig)))"  # tau2_bench's rule


def ctx(**values: Any) -> Event:
    return Event(type="context_update", args=values, agent=oracle.AGENT)


def test_unset_context_value_is_unknown_here_and_none_there() -> None:
    """No context recorded the original payment method: we cannot tell whether the new
    one differs; Sponsio's CtxValue is None, Eq is false and the rule passes."""
    ours, theirs = formula_contract(PAYMENT)
    assert both(ours, theirs, [call("pay", {"pm": "pm_1"})]) == ("unverifiable", "pass")
    # recorded, both sides agree: the same method is a violation, another one passes
    assert both(ours, theirs, [ctx(orig="pm_1"), call("pay", {"pm": "pm_1"})]) == (
        "violated",
        "violated",
    )
    assert both(ours, theirs, [ctx(orig="pm_1"), call("pay", {"pm": "pm_2"})]) == ("pass", "pass")


def test_context_values_keep_their_json_type_here() -> None:
    """A numeric context value 5 equals the argument 5 here; Sponsio stringifies context
    values ("5"), which never equals the number, so its rule passes."""
    ours, theirs = formula_contract(PAYMENT)
    assert both(ours, theirs, [ctx(orig=5), call("pay", {"pm": 5})]) == ("violated", "pass")


def test_arg_value_keeps_its_last_value_at_other_tools_calls() -> None:
    """At a call of another tool ArgValue is None in Sponsio (the comparison is false);
    here it keeps the value of the latest call of its tool, as arg_length does."""
    ours, theirs = formula_contract("G(called(b) -> !(arg_value(a, m) == 'x'))")
    assert both(ours, theirs, [call("a", {"m": "x"}), call("b")]) == ("violated", "pass")
    # before any call of a there is no value: unknown here
    assert both(ours, theirs, [call("b")]) == ("unverifiable", "pass")


def test_a_string_has_no_order_with_a_number_here() -> None:
    """Sponsio coerces a numeric-looking string in an ordered comparison ("5000" → 5000)
    and makes any other one false; here ordering a string against a number is unknown."""
    ours, theirs = formula_contract("G(called(a) -> arg_value(a, m) <= 10)")
    assert both(ours, theirs, [call("a", {"m": "5000"})]) == ("unverifiable", "violated")
    assert both(ours, theirs, [call("a", {"m": "abc"})]) == ("unverifiable", "violated")
    assert both(ours, theirs, [call("a", {"m": 5000})]) == ("violated", "violated")


def test_evidence_without_a_recorded_verdict_is_unknown_here() -> None:
    """Sponsio's session log records the evidence action ``<evidence:p>`` but not the
    verdict: we cannot tell whether the claim verified; Sponsio (no verdict atom) says
    it did not."""
    ours, theirs = pattern_contract("claim_requires_evidence", ["p"])
    bare = Event(type="evidence", tool="p", args=None, agent=oracle.AGENT)
    assert both(ours, theirs, [bare]) == ("unverifiable", "violated")
    passed = Event(type="evidence", tool="p", args={"verdict": "PASS"}, agent=oracle.AGENT)
    assert both(ours, theirs, [passed]) == ("pass", "pass")
