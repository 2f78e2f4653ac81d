"""Property: random SDK span trees exported as OTLP/JSON and as protobuf ingest identically."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import events, load, make_otel

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
scalar = st.one_of(
    text,
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_args = st.dictionaries(
    st.text(max_size=5), st.one_of(text, st.integers(-1000, 1000)), max_size=3
)


@st.composite
def attrs(draw: Any) -> dict[str, Any]:
    """Attributes of one of the conventions (or none), with random values."""
    kind = draw(
        st.sampled_from(["tool", "chat", "agent", "traceloop", "oi_tool", "oi_llm", "plain"])
    )
    extra = draw(st.dictionaries(st.sampled_from(["x.a", "x.b", "session.id"]), scalar, max_size=2))
    name = draw(st.sampled_from(["a", "b", "search", "Ünï"]))
    if kind == "tool":
        a = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        if draw(st.booleans()):
            a["gen_ai.tool.call.arguments"] = json.dumps(draw(json_args), ensure_ascii=False)
        if draw(st.booleans()):
            a["gen_ai.tool.call.result"] = draw(text)
    elif kind == "chat":
        msgs = [{"role": "user", "parts": [{"type": "text", "content": draw(text)}]}]
        out = [
            {
                "role": "assistant",
                "parts": [{"type": "tool_call", "name": name, "arguments": draw(json_args)}],
            }
        ]
        a = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(msgs),
            "gen_ai.output.messages": json.dumps(out),
            "gen_ai.usage.input_tokens": draw(st.integers(0, 10**6)),
        }
    elif kind == "agent":
        a = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    elif kind == "traceloop":
        a = {
            "traceloop.span.kind": draw(st.sampled_from(["tool", "agent"])),
            "traceloop.entity.name": name,
            "traceloop.entity.input": json.dumps({"args": [], "kwargs": draw(json_args)}),
        }
    elif kind == "oi_tool":
        a = {"openinference.span.kind": "TOOL", "tool.name": name, "input.value": draw(text)}
    elif kind == "oi_llm":
        a = {
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": draw(text),
            "llm.token_count.total": draw(st.integers(0, 100)),
        }
    else:
        a = {"list": draw(st.lists(st.integers(-5, 5), max_size=3))}
    return {**a, **extra}


@st.composite
def tree(draw: Any, depth: int = 0) -> dict[str, Any]:
    """A span tree with coarse times (so ties happen) inside the parent's interval."""
    start = draw(st.integers(0, 4))
    end = start + draw(st.integers(0, 4))
    kids = draw(st.lists(tree(depth + 1), max_size=3 if depth < 2 else 0))
    return {
        "name": f"span{depth}",
        "start": start,
        "end": end,
        "attrs": draw(attrs()),
        "children": kids,
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tree(), min_size=1, max_size=2), st.sampled_from(["svc", "ünï-svc"]))
def test_json_and_protobuf_exports_ingest_identically(
    trees: list[dict[str, Any]], svc: str
) -> None:
    req = make_otel.spans_request(trees, svc)
    with tempfile.TemporaryDirectory() as d:
        make_otel.write_all(Path(d) / "t", [req])
        a, sa = load(Path(d) / "t.jsonl")
        b, sb = load(Path(d) / "t.pb")
        ea, eb = events(a), events(b)
        assert sa.skipped == sb.skipped == 0
        assert sa.spans == sb.spans == len(req.resource_spans[0].scope_spans[0].spans)
        assert ea == eb
        for t in {e["trace_id"] for e in ea}:
            assert [e["seq"] for e in ea if e["trace_id"] == t] == list(
                range(sum(e["trace_id"] == t for e in ea))
            )
        sa_rows = a.con.execute("SELECT * EXCLUDE (file_id) FROM spans ORDER BY span_id").fetchall()
        assert (
            sa_rows
            == b.con.execute("SELECT * EXCLUDE (file_id) FROM spans ORDER BY span_id").fetchall()
        )
