"""The reading rules of CONVENTIONS.md ("What real instrumentations emit") one by one, and
log records attached whatever the file order.

The span attributes below are the shapes the real packages wrote into
fixtures/instrumented (see its README); each rule is also exercised end to end by
test_events on those files.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest.conventions import FACT_FIELDS, span_facts

from .conftest import FIX, load


def _facts(name: str, attrs: dict) -> dict:
    return dict(zip(FACT_FIELDS, span_facts(name, attrs), strict=True))


def test_execute_tool_without_arguments_takes_them_from_input_value() -> None:
    f = _facts(
        "bash",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "bash",
            "input.value": '{"command": "rm -rf /tmp/build"}',
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "bash",
            "gen_ai.tool.call.result": "exit 0",
        },
    )
    assert (f["role"], f["tool"], f["args"], f["content"]) == (
        "tool",
        "bash",
        '{"command":"rm -rf /tmp/build"}',
        "exit 0",
    )


def test_bare_input_value_is_named_by_a_one_property_schema_else_missing() -> None:
    base = {"openinference.span.kind": "TOOL", "tool.name": "check_policy", "input.value": "A-1"}
    schema = {"type": "object", "properties": {"order_id": {"type": "string"}}}
    named = _facts("check_policy", {**base, "tool.parameters": json.dumps(schema)})
    assert (named["args"], named["bare"]) == ('{"order_id":"A-1"}', None)
    two = {"properties": {"order_id": {}, "amount": {}}}
    unnamed = _facts("check_policy", {**base, "tool.parameters": json.dumps(two)})
    assert (unnamed["args"], unnamed["bare"]) == (None, '"A-1"')  # never {"input": …}


def test_a_langchain_tool_message_result_is_its_content() -> None:
    msg = {"type": "tool", "data": {"content": "policy ok", "tool_call_id": "c1", "name": "p"}}
    oi = _facts("p", {"openinference.span.kind": "TOOL", "output.value": json.dumps(msg)})
    assert (oi["content"], oi["call_id"]) == ("policy ok", "c1")
    lc = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "ToolMessage"],
        "kwargs": {"content": "snow, -3C", "tool_call_id": "c2"},
    }
    result = json.dumps({"output": lc, "kwargs": {"name": "get_weather"}})
    ol = _facts(
        "execute_tool get_weather",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": result},
    )
    assert (ol["tool"], ol["content"], ol["call_id"]) == ("get_weather", "snow, -3C", "c2")
    # a tool whose own result looks like JSON but is no ToolMessage keeps its text
    plain = _facts("t", {"openinference.span.kind": "TOOL", "output.value": '{"ok": true}'})
    assert plain["content"] == '{"ok": true}'


def test_openllmetry_langchain_args_are_the_callback_inputs() -> None:
    payload = {
        "input_str": "{'order_id': 'A-1'}",
        "tags": [],
        "metadata": {},
        "inputs": {"order_id": "A-1"},
        "kwargs": {"tool_call_id": "c3"},
    }
    f = _facts(
        "execute_tool check_policy",
        {
            "traceloop.span.kind": "tool",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "check_policy",
            "gen_ai.tool.call.arguments": json.dumps(payload),
        },
    )
    assert (f["args"], f["call_id"]) == ('{"order_id":"A-1"}', "c3")
    # the same payload under the Traceloop keys only (no GenAI attributes)
    lc = {"lc": 1, "id": ["ToolMessage"], "kwargs": {"content": "policy ok"}}
    old = _facts(
        "check_policy.tool",
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "check_policy",
            "traceloop.entity.input": json.dumps(payload),
            "traceloop.entity.output": json.dumps({"output": lc}),
        },
    )
    assert (old["tool"], old["args"], old["content"]) == (
        "check_policy",
        '{"order_id":"A-1"}',
        "policy ok",
    )


def _split(path: Path) -> list[bytes]:
    return gzip.decompress(path.read_bytes()).splitlines(keepends=True)


LINES = [
    *_split(FIX / "openai_v2_logs.traces.jsonl.gz"),
    *_split(FIX / "openai_v2_logs.logs.jsonl.gz"),
]
BASE = load("openai_v2_logs.traces.jsonl.gz", "openai_v2_logs.logs.jsonl.gz")
COLS = "trace_id, seq, type, tool, args, content, prompt, system_prompt, tokens_total"


@settings(max_examples=8, deadline=None)
@given(st.permutations(range(len(LINES))), st.integers(1, 4))
def test_log_records_attach_in_any_file_order(order: list[int], files: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        paths = []
        for k in range(files):
            p = Path(d) / f"part{k}.jsonl"
            p.write_bytes(b"".join(LINES[i] for i in order[k::files]))
            paths.append(p)
        store = load(*paths)
        sql = f"SELECT {COLS} FROM events ORDER BY trace_id, seq"
        assert store.con.execute(sql).fetchall() == BASE.con.execute(sql).fetchall()
