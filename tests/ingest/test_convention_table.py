"""Property: the table-driven facts follow CONVENTIONS.md's precedence ("Span → event").

Random spans carry the keys of several conventions at once (a GenAI
``execute_tool`` span that is also an OpenInference TOOL span, …) with values
absent, null, empty or recorded. The expected facts are stated here from the
document, not from the code: rows apply in the table's order (OTel GenAI,
OpenLLMetry, OpenInference), the first row that applies wins **per field**,
and a field it did not record comes from the next row of the same role that
did; the conversation is ``gen_ai.conversation.id``, else ``session.id`` (else
Sponsio's); token totals not recorded are input + output when both are.
Values are chosen so that reading one is plain (JSON objects, plain texts).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest.conventions import FACT_FIELDS, span_facts

ABSENT = object()
TEXT = st.sampled_from(["", "t1", "t2", "ünï"])
RESULT = st.sampled_from(["r1", "ok: done", "ünï"])  # plain text, not JSON
ARGS = st.dictionaries(st.sampled_from(["city", "n"]), st.integers(0, 9) | TEXT, min_size=1)
TOKENS = st.none() | st.integers(0, 99) | st.sampled_from(["12", "x", True])
CONV = ("gen_ai.conversation.id", "session.id", "sponsio.conversation_id")


def _maybe(s: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.just(ABSENT) | s


def _put(attrs: dict[str, Any], key: str, v: Any) -> None:
    if v is not ABSENT:
        attrs[key] = v


def _first(*vals: Any) -> Any:
    """The first value that is recorded (not None): the per-field rule across rows."""
    return next((v for v in vals if v is not None), None)


def _after(name: str, prefix: str) -> str | None:
    return (name[len(prefix) :].strip() or None) if name.startswith(prefix) else None


def _int(v: Any) -> int | None:
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    return int(v) if v.lstrip("-").isdigit() else None


def _compact(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


@st.composite
def _common(draw: st.DrawFn) -> tuple[dict[str, Any], str | None, str | None]:
    """Conversation keys (null counts as not recorded) and the span's agent name."""
    attrs: dict[str, Any] = {}
    for k in CONV:
        _put(attrs, k, draw(_maybe(st.none() | st.sampled_from(["s1", "s2"]))))
    _put(attrs, "gen_ai.agent.name", agent := draw(_maybe(st.sampled_from(["a1", "a2"]))))
    conv = _first(*(attrs.get(k) for k in CONV))
    return attrs, conv, None if agent is ABSENT else agent


def _facts(**kw: Any) -> tuple[Any, ...]:
    return tuple(kw.get(f) for f in FACT_FIELDS)


@st.composite
def tool_spans(draw: st.DrawFn) -> tuple[str, dict[str, Any], tuple[Any, ...]]:
    name = draw(
        st.sampled_from(["execute_tool lookup", "execute_tool", "lookup", "execute_tool  x "])
    )
    attrs, conv, agent = draw(_common())
    rows = draw(st.sets(st.sampled_from(["gen_ai", "openllmetry", "openinference"]), min_size=1))
    keys = {  # per row: (selector, tool name key, args key, result key)
        "gen_ai": (("gen_ai.operation.name", "execute_tool"), "gen_ai.tool.name",
                   "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"),
        "openllmetry": (("traceloop.span.kind", "tool"), "traceloop.entity.name",
                        "traceloop.entity.input", "traceloop.entity.output"),
        "openinference": (("openinference.span.kind", "TOOL"), "tool.name", "input.value",
                          "output.value"),
    }  # fmt: skip
    tool, args, content = [], [], []
    for row in ("gen_ai", "openllmetry", "openinference"):  # the table's order
        (sel, val), tk, ak, rk = keys[row]
        t, a, r = draw(_maybe(TEXT)), draw(_maybe(ARGS)), draw(_maybe(RESULT))
        _put(attrs, tk, t)
        _put(attrs, ak, a if a is ABSENT else json.dumps(a))  # as recorded: with spaces
        _put(attrs, rk, r)
        if row not in rows:
            continue
        attrs[sel] = val
        # a tool's name: its key when not empty, else (GenAI) the span name after
        # "execute_tool", (the others) the span name
        named = t if t is not ABSENT and t else None
        tool.append(named or (_after(name, "execute_tool") if row == "gen_ai" else name))
        args.append(None if a is ABSENT else _compact(a))
        content.append(None if r is ABSENT else r)
    cid = draw(_maybe(st.just("c1")))
    _put(attrs, "gen_ai.tool.call.id", cid)
    convention = next(r for r in ("gen_ai", "openllmetry", "openinference") if r in rows)
    want = _facts(
        role="tool",
        convention=convention,
        agent=agent,
        agent_scope=False,
        tool=_first(*tool),
        args=_first(*args),
        content=_first(*content),
        conversation=conv,
        call_id=cid if "gen_ai" in rows and cid is not ABSENT else None,
    )
    return name, attrs, want


@st.composite
def llm_spans(draw: st.DrawFn) -> tuple[str, dict[str, Any], tuple[Any, ...]]:
    attrs, conv, agent = draw(_common())
    rows = draw(st.sets(st.sampled_from(["gen_ai", "openinference"]), min_size=1))
    genai_keys = (
        "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens", "gen_ai.usage.total_tokens", "llm.usage.total_tokens",
    )  # fmt: skip
    oi_keys = ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total")
    for k in genai_keys + oi_keys:
        _put(attrs, k, draw(_maybe(TOKENS)))

    def present(*keys: str) -> Any:
        """GenAI tokens: the current key when present (even null), else the older one."""
        return next((attrs[k] for k in keys if k in attrs), None)

    def row(tin: Any, tout: Any, total: Any) -> list[int | None]:
        i, o, t = _int(tin), _int(tout), _int(total)
        return [i, o, t if t is not None else (i + o if i is not None and o is not None else None)]

    per_row = []
    if "gen_ai" in rows:
        attrs["gen_ai.operation.name"] = "chat"
        per_row.append(
            row(
                present(*genai_keys[0:2]),
                present(*genai_keys[2:4]),
                present(*genai_keys[4:6]),
            )
        )
    if "openinference" in rows:
        attrs["openinference.span.kind"] = "LLM"
        per_row.append(row(*(attrs.get(k) for k in oi_keys)))
    tin, tout, total = (_first(*(r[i] for r in per_row)) for i in range(3))
    want = _facts(
        role="llm",
        convention="gen_ai" if "gen_ai" in rows else "openinference",
        agent=agent,
        agent_scope=False,
        tokens_in=tin,
        tokens_out=tout,
        tokens_total=total,
        conversation=conv,
    )
    return "chat gpt", attrs, want


@st.composite
def agent_spans(draw: st.DrawFn) -> tuple[str, dict[str, Any], tuple[Any, ...]]:
    name = draw(st.sampled_from(["invoke_agent planner", "invoke_agent", "planner"]))
    attrs, conv, agent = draw(_common())
    rows = draw(st.sets(st.sampled_from(["gen_ai", "openllmetry", "openinference"]), min_size=1))
    _put(attrs, "traceloop.entity.name", entity := draw(_maybe(TEXT)))
    _put(attrs, "agent.name", oi_name := draw(_maybe(TEXT)))
    names = []
    if "gen_ai" in rows:  # the agent's name, else the span name after "invoke_agent"
        attrs["gen_ai.operation.name"] = "invoke_agent"
        names.append(agent or _after(name, "invoke_agent"))
    if "openllmetry" in rows:  # the agent's name, else the entity's, else the span name
        attrs["traceloop.span.kind"] = "agent"
        names.append(agent or (entity if entity is not ABSENT and entity else None) or name)
    if "openinference" in rows:  # the agent's name, else agent.name, else the span name
        attrs["openinference.span.kind"] = "AGENT"
        names.append(agent or (oi_name if oi_name is not ABSENT and oi_name else None) or name)
    convention = next(r for r in ("gen_ai", "openllmetry", "openinference") if r in rows)
    want = _facts(
        role="agent",
        convention=convention,
        agent=_first(*names),
        agent_scope=True,
        conversation=conv,
    )
    return name, attrs, want


def _check(case: tuple[str, dict[str, Any], tuple[Any, ...]]) -> None:
    name, attrs, want = case
    got = span_facts(name, attrs)
    assert dict(zip(FACT_FIELDS, got, strict=True)) == dict(zip(FACT_FIELDS, want, strict=True))


@settings(max_examples=400, deadline=None)
@given(tool_spans())
def test_tool_facts_follow_the_documented_precedence(case: tuple[str, dict, tuple]) -> None:
    _check(case)


@settings(max_examples=200, deadline=None)
@given(llm_spans())
def test_llm_tokens_follow_the_documented_precedence(case: tuple[str, dict, tuple]) -> None:
    _check(case)


@settings(max_examples=200, deadline=None)
@given(agent_spans())
def test_agent_names_follow_the_documented_precedence(case: tuple[str, dict, tuple]) -> None:
    _check(case)


@settings(max_examples=100, deadline=None)
@given(_common(), st.sampled_from(["GET", "db.query", "sponsio.other"]))
def test_a_span_no_row_applies_to_keeps_its_agent_and_conversation(
    common: tuple[dict[str, Any], str | None, str | None], name: str
) -> None:
    attrs, conv, agent = common
    want = _facts(agent=agent, agent_scope=False, conversation=conv)
    assert span_facts(name, attrs) == (want if agent or conv else (None,) * len(FACT_FIELDS))


def test_a_row_that_cannot_be_compiled_is_refused_with_its_name() -> None:
    from sponsio_audit.ingest.convention_table import Convention, Pick, When
    from sponsio_audit.ingest.conventions import Reader

    when = (When(names=frozenset({"x"})),)
    for fields in ((Pick("role", ("k",)),), (Pick("tool_name", ("k",)),), (Pick("tool", ()),)):
        with pytest.raises(ValueError, match="convention row mine/tool"):
            Reader((Convention("mine", "tool", when, fields),))
    with pytest.raises(ValueError, match="mine/tool: every When"):
        Reader((Convention("mine", "tool", (When(),), (Pick("tool", ("k",)),)),))
    # a new row is one entry: recognised by its span name, its field from its key
    reader = Reader((Convention("mine", "tool", when, (Pick("tool", ("k",)),)),))
    facts = dict(zip(FACT_FIELDS, reader.facts("x", {"k": 5, "session.id": "s"}), strict=True))
    assert (facts["role"], facts["convention"], facts["tool"]) == ("tool", "mine", "5")
    assert facts["conversation"] == "s" and facts["agent_scope"] is False
