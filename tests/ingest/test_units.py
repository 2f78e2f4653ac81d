"""Small units: structured message values, agent on the span, caps, timestamps."""

from __future__ import annotations

from sponsio_audit.ingest import values
from sponsio_audit.ingest.conventions import FACT_FIELDS, span_facts
from sponsio_audit.ingest.parsed import ts_ns

F = {k: i for i, k in enumerate(FACT_FIELDS)}


def test_structured_messages_equal_json_string_messages() -> None:
    msgs = [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Hi"}]},
    ]
    base = {"gen_ai.operation.name": "chat", "gen_ai.agent.name": "helper"}
    structured = span_facts("chat", {**base, "gen_ai.input.messages": msgs})
    as_text = span_facts("chat", {**base, "gen_ai.input.messages": values.dumps(msgs)})
    assert structured == as_text
    assert structured[F["prompt"]] == "system: Be brief.\nuser: Hi"
    assert structured[F["system_prompt"]] == "Be brief."
    assert structured[F["agent"]] == "helper"  # gen_ai.agent.name on the span itself
    assert structured[F["content"]] is None  # output not recorded


def test_system_instructions_and_missing_input() -> None:
    f = span_facts(
        "chat",
        {"gen_ai.operation.name": "chat", "gen_ai.system_instructions": "[{\"type\": \"text\", "
         "\"content\": \"Rules.\"}]"},
    )  # fmt: skip
    assert (f[F["prompt"]], f[F["system_prompt"]]) == (None, "Rules.")
    f = span_facts("chat", {"gen_ai.operation.name": "chat"})
    assert (f[F["prompt"]], f[F["system_prompt"]], f[F["tokens_total"]]) == (None, None, None)


def test_args_forms() -> None:
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}
    cases = [
        ('{"b": 1, "a": [1, 2]}', '{"b":1,"a":[1,2]}'),
        ({"k": {"x": None}}, '{"k":{"x":null}}'),
        ("plain text", '{"input":"plain text"}'),
        ("[1, 2]", '{"input":[1,2]}'),
        (7, '{"input":7}'),
        ("", '{"input":""}'),
    ]
    for raw, text in cases:
        assert span_facts("x", {**tool, "gen_ai.tool.call.arguments": raw})[F["args"]] == text
    assert span_facts("x", tool)[F["args"]] is None


def test_caps() -> None:
    assert values.cut("ab") == "ab"
    deep: list[object] = []
    node = deep
    for _ in range(100):
        nxt: list[object] = []
        node.append(nxt)
        node = nxt
    capped = values.cap(deep)
    depth = 0
    while isinstance(capped, list):
        capped, depth = capped[0], depth + 1
    assert (depth, capped) == (values.MAX_DEPTH, values.DEPTH_MARKER)
    assert values.dumps({"x": float("nan")}) == '{"x":"nan"}'


def test_timestamps() -> None:
    assert ts_ns("1970-01-01T00:00:01Z") == 10**9
    assert ts_ns("1970-01-01T01:00:01+01:00") == 10**9
    assert ts_ns("1970-01-01T00:00:00.000001") == 1000
    assert ts_ns(1.5) == 1_500_000_000
    assert ts_ns(1_700_000_000_000) == 1_700_000_000_000 * 10**6  # epoch ms
    assert ts_ns("yesterday") is None
