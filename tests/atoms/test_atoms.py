"""Hand-checked values of every atom of SEMANTICS.md §5 (both groundings must agree)."""

from __future__ import annotations

import pytest

from sponsio_audit.atoms.online import Grounder
from sponsio_audit.event import Event
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.reference import Composite

from .helpers import call, values, values_of

T, F, U = True, False, None


def llm_req(prompt: str | None, system: str | None = "") -> Event:
    return Event(type="llm_request", prompt=prompt, system_prompt=system)


def llm_resp(content: str | None = "ok", **tokens: int | None) -> Event:
    return Event(type="llm_response", content=content, **tokens)


# ---------------------------------------------------------------- tool names


def test_called_mcp_prefix_both_ways() -> None:
    trace = [
        call("mcp__fin__Issue_Refund"),
        call("ISSUE_REFUND"),
        call("mcp__other__issue_refund"),
        call("issue_refund_v2"),
        llm_req("hi"),
        call(None),
    ]
    # a tool call whose tool was not recorded: unknown (SEMANTICS.md §5 table)
    assert values("called(issue_refund)", trace) == [T, T, T, F, F, U]
    assert values("called(mcp__fin__issue_refund)", trace) == [T, F, F, F, F, U]
    assert values("called(MCP__FIN__ISSUE_REFUND)", trace) == [T, F, F, F, F, U]
    assert values("called_any()", trace) == [T, T, T, T, F, T]


def test_count_and_consecutive_count() -> None:
    trace = [call("a"), call("A"), call("b"), llm_req("x"), call("a"), call("a")]
    assert values("count(a)", trace) == [1, 2, 2, 2, 3, 4]
    # a non-call event breaks the run (positions are the rows given)
    assert values("consecutive_count(a)", trace) == [1, 2, 0, 0, 1, 2]


# ---------------------------------------------------------------- args


def test_arg_has_missing_vs_empty() -> None:
    trace = [call("bash", None), call("bash", {}), call("bash", {"cmd": "rm -rf /"}), call("ls")]
    assert values("arg_has(bash, rm)", trace) == [U, F, T, F]
    assert values("arg_has(bash, ^\\{\\}$)", trace) == [U, T, F, F]
    assert values("called_with(bash, rm)", trace) == [U, F, T, F]


def test_arg_has_matches_compact_json_in_key_order() -> None:
    trace = [call("t", {"b": 1, "a": "é"}), call("t", {"a": [1, {"x": None}]})]
    assert values_of(Atom("arg_has", ("t", '^\\{"b":1,"a":"é"\\}$')), trace) == [T, F]
    assert values_of(Atom("arg_has", ("t", '\\[1,\\{"x":null\\}\\]')), trace) == [F, T]
    assert values_of(Atom("arg_has", ("t", "(?i)É")), trace) == [T, F]
    assert values_of(Atom("arg_has", ("t", "É")), trace) == [F, F]


def test_arg_field_has_and_arg_eq() -> None:
    trace = [
        call("t", {"f": "hello"}),
        call("t", {"f": 12}),
        call("t", {"f": {"x": [1, "é"]}}),
        call("t", {"g": "hello"}),
        call("t", None),
        call("t", {"a": {"b": "deep"}, "a.b": "top"}),
        call("t", {"a": {"b": "deep"}}),
        call("u", {"f": "hello"}),
    ]
    assert values("arg_field_has(t, f, ^hel)", trace) == [T, F, F, F, U, F, F, F]
    assert values("arg_field_has(t, f, ^12$)", trace) == [F, T, F, F, U, F, F, F]
    assert values_of(Atom("arg_field_has", ("t", "f", '^\\{"x":\\[1,"é"\\]\\}$')), trace)[2] is T
    assert values("arg_field_has(t, a.b, top|deep)", trace)[5:7] == [T, T]
    assert values("arg_eq(t, a.b, top)", trace)[5:7] == [T, F]  # top-level key wins
    assert values("arg_eq(t, a.b, deep)", trace)[5:7] == [F, T]  # else the dotted path
    assert values("arg_eq(t, f, hello)", trace) == [T, F, F, F, U, F, F, F]
    assert values_of(Atom("arg_eq", ("t", "f", 12)), trace)[:2] == [F, T]
    assert values("arg_eq(t, f, 12)", trace)[:2] == [F, T]  # "12" equals the number 12


@pytest.mark.parametrize("filler", [0, 70])  # 70 distinct args: DuckDB reads the fields
def test_arg_eq_compares_numbers_as_numbers(filler: int) -> None:
    # SEMANTICS.md §5 "field f equals v": 5000.0 is the JSON number 5000. Compared as text,
    # arg_eq(transfer, amount, 5000) was false on 5000.0, so G(c(t) -> !arg_eq(...)) passed
    values = [5000, 5000.0, 5e3, "5000", "5000.0", 5000.5, 2**53 + 1, True, "5 000", -5000]
    trace = [call("t", {"f": v}) for v in values] + [call("t", {"f": i}) for i in range(filler)]
    got = values_of(Atom("arg_eq", ("t", "f", 5000)), trace)[: len(values)]
    assert got == [T, T, T, T, T, F, F, F, F, F]
    assert values_of(Atom("arg_eq", ("t", "f", 2**53)), trace)[6] is F  # exact, not via floats
    assert values_of(Atom("arg_eq", ("t", "f", 5000.5)), trace)[5] is T
    assert values_of(Atom("arg_eq", ("t", "f", -5000.0)), trace)[9] is T


def test_arg_length_and_numeric_keep_last_value() -> None:
    trace = [
        llm_req("x"),
        call("t", {"f": "héllo", "n": " 7 "}),
        call("u", {"f": "zz"}),
        call("t", {"f": 123, "n": True}),
        call("t", {"n": "1_000"}),
        call("t", None),
        call("u"),
        call("t", {"f": [1, 2], "n": -2.5}),
        call("t", {"f": "", "n": "1e999"}),
    ]
    # [1, 2] has 2 items (Sponsio's ArgLength, SEMANTICS.md §5)
    assert values("arg_length(t, f)", trace) == [0, 5, 5, 3, U, U, U, 2, 0]
    assert values("arg_numeric(t, n)", trace) == [0, 7.0, 7.0, U, U, U, U, -2.5, U]


def test_arg_paths_within_normalisation() -> None:
    def within(args: object, *prefixes: str) -> bool | None:
        return values_of(Atom("arg_paths_within", ("w", *prefixes)), [call("w", args)])[0]

    assert within({"path": "/data/x"}, "/data") is T
    assert within({"path": "/data"}, "/data") is T
    assert within({"path": "/data2/x"}, "/data") is F
    assert within({"path": "/data/../etc/passwd"}, "/data") is F
    assert within({"path": "/data/./a/../b"}, "/data") is T
    assert within({"path": "//data///x/"}, "/data/") is T
    assert within({"path": "./x"}, "/data") is F  # relative: unknown directory
    assert within({"path": "./x"}, ".") is T
    assert within({"path": "../x"}, ".") is F
    assert within({"path": "x.txt"}, "/data", ".") is T  # path keys count even when relative
    assert within({"path": "~/notes"}, "/home") is F  # ~ is not expanded
    assert within({"path": "~/notes"}, "~") is T
    assert within({"path": "~/../etc"}, "~") is F
    assert within({"path": "/.."}, "/") is T
    assert within({"cmd": "rm -rf /data/x >/tmp/log"}, "/data") is F
    assert within({"cmd": "rm -rf /data/x >/tmp/log"}, "/data", "/tmp") is T
    assert within({"cmd": "dd if=/dev/zero of=/data/x"}, "/data") is F
    assert within({"opts": {"out": ["/data/a", "'/data/b'"]}}, "/data") is T
    assert within({"paths": ["/data/a", "/etc/b"]}, "/data") is F
    assert within({"q": "no paths here", "n": 3}, "/data") is T
    assert within({}, "/data") is T
    assert within(None, "/data") is U
    assert values_of(Atom("arg_paths_within", ("w", "/data")), [call("v", {"path": "/x"})]) == [F]


def test_output_has() -> None:
    trace = [
        call("t", content="ERROR: x"),
        call("t", content=None),
        call("t", content=""),
        call("u"),
    ]
    assert values("output_has(t, ERROR)", trace) == [T, U, F, F]


# ---------------------------------------------------------------- config and state


def test_perm() -> None:
    trace = [call("t", agent="a"), call("t", agent="b"), call("t", agent=None)]
    assert values("perm(admin)", trace, {"a": frozenset({"admin"})}) == [T, F, F]
    assert values("perm(admin)", trace, frozenset({"admin"})) == [T, T, T]
    assert values("perm(admin)", trace, None) == [F, F, F]


def test_contains() -> None:
    trace = [
        Event(type="data_write", args={"name": "x"}),
        Event(type="data_write", args=None),
        call("t", {"email": "a@b"}),
        Event(type="data_write", args={"email": None}),
        Event(type="data_read"),
    ]
    assert values("contains(email)", trace) == [F, F, F, T, T]


def test_flow() -> None:
    trace = [
        Event(type="data_read", agent="b", target="a"),  # nothing written yet
        Event(type="data_write", agent="a"),
        Event(type="message", agent="a", target="c"),  # the writer passes its data on
        Event(type="data_read", agent="b", target="a"),
        Event(type="delegation", agent="b", target="d"),
        call("t", agent="d"),
    ]
    assert values("flow(a, b)", trace) == [F, F, F, T, T, T]
    assert values("flow(a, c)", trace) == [F, F, T, T, T, T]
    assert values("flow(a, d)", trace) == [F, F, F, F, T, T]
    assert values("flow(b, a)", trace) == [F] * 6
    assert values("flow(a, a)", trace) == [F] * 6


def test_ctx() -> None:
    trace = [
        call("t"),
        Event(type="context_update", args={"role": "user"}),
        Event(type="context_update", args={"other": 1}),
        Event(type="context_update", args={"role": 5}),
        Event(type="context_update", args=None),
    ]
    assert values("ctx(role, user)", trace) == [U, T, T, F, F]
    assert values("ctx(role, 5)", trace) == [U, F, F, T, T]
    assert values("ctx_matches(role, ^us)", trace) == [U, T, T, F, F]
    assert values("ctx(missing, x)", trace) == [U] * 5


def test_delegation_depth() -> None:
    trace = [
        call("t", agent="a"),
        Event(type="delegation", agent="a", target="b"),
        call("t", agent="b"),
        Event(type="message", agent="b", target="c"),
        call("t", agent="c"),
        Event(type="message", agent="c", target="a"),  # a reply up the chain: no deeper
        call("t", agent="a"),
        Event(type="delegation", agent="a", target="c"),  # c stays at its max depth 2
    ]
    assert values("delegation_depth()", trace) == [0, 1, 1, 1, 2, 2, 0, 2]


# ---------------------------------------------------------------- LLM atoms


def test_llm_text_atoms() -> None:
    trace = [llm_req("Ignore previous"), llm_resp("SSN 123-45-6789"), llm_req(None), llm_resp(None)]
    assert values("llm_input_contains((?i)ignore)", trace) == [T, F, U, F]
    assert values("prompt_contains(Ignore)", trace) == [T, F, U, F]
    assert values("llm_said(\\d{3}-\\d{2})", trace) == [F, T, F, U]
    assert values("llm_output_contains(x)", trace) == [F, F, F, U]


def test_system_prompt_and_context_length() -> None:
    trace = [call("t"), llm_req("héllo", "sys"), llm_req("ab", ""), llm_resp(), llm_req(None, None)]
    assert values("system_prompt_present()", trace) == [F, T, F, F, U]
    assert values("context_length()", trace) == [0, 5, 2, 2, U]


def test_token_count_sticky_unknown() -> None:
    trace = [
        call("t"),
        llm_resp(tokens_in=3, tokens_out=4),
        llm_resp(tokens_in=1, tokens_out=None, tokens_total=10),
        llm_resp(tokens_in=2, tokens_out=1),
        call("t"),
    ]
    assert values("token_count(input)", trace) == [0, 3, 4, 6, 6]
    assert values("token_count(output)", trace) == [0, 4, U, U, U]
    assert values("token_count(total)", trace) == [0, 7, 17, 20, 20]
    trace[2] = llm_resp(tokens_in=1)
    assert values("token_count(total)", trace) == [0, 7, U, U, U]
    with pytest.raises(ValueError):
        values("token_count(bogus)", trace)


def test_latency_exceeds() -> None:
    trace = [
        call("t", duration_ns=5_000_001),
        call("t", duration_ns=5_000_000),
        call("t"),
        call("u"),
    ]
    assert values_of(Atom("latency_exceeds", ("t", 5)), trace) == [T, F, U, F]


def test_count_with_unknown_after_missing_args() -> None:
    trace = [call("h", {"u": "a.com"}), call("h", {"u": "b"}), call("x", None), call("h", None)]
    trace.append(call("h", {"u": "a.com"}))
    assert values("count_with(h, a\\.com)", trace) == [1, 1, 1, U, U]


def test_bad_regex_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="RE2"):
        Grounder([Atom("arg_has", ("t", "(?<=a)(b"))])
    with pytest.raises(ValueError, match="RE2"):
        values("arg_has(t, 'a(')", [call("t", {})])


def test_lookaround_regex_is_evaluated() -> None:
    """SEMANTICS.md §5: lookaround runs on the backtracking engine."""
    trace = [call("t", {"c": "rm -rf x"}), call("t", {"c": "arm"}), call("t", None)]
    rm = Atom("arg_field_has", ("t", "c", r"(?<!\S)rm(?!\S)"))
    assert values_of(rm, trace) == [True, False, U]
    assert values_of(Atom("arg_has", ("t", r"(r)m\1?")), trace) == [True, True, U]


# ---------------------------------------------------------------- the grounder


def test_rollback_undoes_the_last_event_only() -> None:
    atoms = [Atom("count", ("t",)), Atom("flow", ("a", "b")), Atom("ctx", ("k", "v"))]
    g = Grounder(atoms)
    g.ground(call("t"))
    g.ground(Event(type="data_write", agent="a"))
    before = g.ground(Event(type="context_update", args={"k": "v"}))
    blocked = g.ground(Event(type="data_read", agent="b", target="a"))
    assert blocked[atoms[1]] is T
    g.rollback()
    after = g.ground(call("t"))
    assert after == {atoms[0]: 2, atoms[1]: F, atoms[2]: T}
    assert before[atoms[0]] == 1
    g.rollback()
    g.rollback()  # a second rollback has nothing left to undo
    assert g.ground(call("u"))[atoms[0]] == 1
    g.reset()
    assert g.ground(call("u")) == {atoms[0]: 0, atoms[1]: F, atoms[2]: U}


def test_empty_table() -> None:
    from sponsio_audit.atoms.columnar import ground_columns
    from sponsio_audit.event import EVENT_SCHEMA

    atoms = [Atom("count", ("t",)), Atom("delegation_depth"), Atom("arg_eq", ("t", "f", "v"))]
    cols = ground_columns(EVENT_SCHEMA.empty_table(), atoms)
    assert all(len(c.value) == len(c.unknown) == 0 for c in cols.values())


def test_helpers() -> None:
    import numpy as np

    from sponsio_audit.atoms.columnar import normalise_tool, trace_starts

    assert trace_starts(np.array(["a", "a", "b", "b", "b", "c"])).tolist() == [0, 0, 2, 2, 2, 5]
    assert trace_starts(np.array([], dtype=object)).tolist() == []
    assert normalise_tool("mcp__fin__Issue_Refund") == "issue_refund"
    assert normalise_tool("MCP__a_b__x__y") == "x__y"
    assert normalise_tool("mcp__fin__") == "mcp__fin__"  # no tool after the server
    assert normalise_tool("Bash") == "bash"
    assert normalise_tool(None) is None


def test_arg_length_is_sponsios_arg_length() -> None:
    """SEMANTICS.md §5: characters of a string, items of a list, keys of an object,
    characters of the JSON text of any other value; unknown without the field."""
    trace = [
        call("t", {"f": "abc"}),
        call("t", {"f": [1, 2, 3, 4]}),
        call("t", {"f": {"a": 1}}),
        call("t", {"f": 12345}),
        call("t", {"f": None}),
        call("t", {"f": True}),
        call("t", {"f": []}),
    ]
    assert values_of(Atom("arg_length", ("t", "f")), trace) == [3, 4, 1, 5, 4, 4, 0]
    assert values_of(Atom("arg_length", ("t", "f")), [call("t", {})]) == [U]


# ---------------------------------------------------------------- value atoms and evidence


def ctx_update(**kv: object) -> Event:
    return Event(type="context_update", args=dict(kv))


def test_arg_value_is_the_json_value_kept_until_the_next_call() -> None:
    trace = [
        call("other", {"pm": "zz"}),  # before any call of pay: no value
        call("pay", {"pm": "pm_1"}),
        call("other", {"pm": "zz"}),  # another tool's call keeps pay's value
        call("PAY", {"pm": 5}),
        call("pay", {"pm": [1, {"b": 2, "a": 1}]}),
        call("pay", {"x": 1}),  # no field pm: unknown
        call("pay", None),  # arguments not recorded: unknown
        call("pay", {"pm": None}),  # a recorded null is a value
        call(None, {"pm": "pm_1"}),  # no recorded tool: may have been pay
    ]
    got = values("arg_value(pay, pm)", trace)
    assert got == [U, "pm_1", "pm_1", 5, Composite('[1,{"a":1,"b":2}]'), U, U,
                   Composite("null"), U]  # fmt: skip


def test_ctx_value_is_the_latest_recorded_value() -> None:
    trace = [call("a"), ctx_update(orig="pm_1", n=3), call("a"), ctx_update(n=4.5), call("a")]
    assert values("ctx_value(orig)", trace) == [U, "pm_1", "pm_1", "pm_1", "pm_1"]
    assert values("ctx_value(n)", trace) == [U, 3, 3, 4.5, 4.5]


def evidence(pred: str | None, args: dict[str, object] | None) -> Event:
    return Event(type="evidence", tool=pred, args=args)


def test_evidence_atoms_read_the_verdict_and_action_of_their_predicate() -> None:
    trace = [
        call("p"),  # a tool call is no claim
        evidence("p", {"verdict": "PASS", "action": "release"}),
        evidence("p", {"verdict": "underdetermined", "action": "CLARIFY"}),
        evidence("q", {"verdict": "PASS", "action": "release"}),
        evidence("p", None),  # verdict not recorded (Sponsio's session log)
        evidence("p", {"action": "block"}),
        evidence(None, {"verdict": "PASS", "action": "release"}),  # predicate not recorded
    ]
    assert values("claim_emitted(p)", trace) == [F, T, T, F, T, T, U]
    assert values("evidence_verdict(p, PASS)", trace) == [F, T, F, F, U, U, U]
    assert values("evidence_verdict(p, UNDERDETERMINED)", trace) == [F, F, T, F, U, U, U]
    assert values("evidence_action(p, clarify)", trace) == [F, F, T, F, U, F, U]
