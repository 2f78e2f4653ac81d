"""Tool arguments recorded as a JSON string literal are that string, in every reader.

``'"rm -rf /tmp/x"'`` is JSON text whose value is ``rm -rf /tmp/x``: kept quoted,
an anchored blacklist (``^rm``) would pass the call. The OTel GenAI reader parses
it with orjson, the others with ``values.loads_maybe``; these tests hold the two
alike. Spans are made by the real OpenTelemetry SDK (``fixtures/make_otel.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import judged, make_otel, no_rm

COMMAND = "rm -rf /tmp/x"
CONTRACTS = no_rm("input", r"^rm\s+-rf")


def _otel(tmp_path: Path, attrs: dict[str, str]) -> list[Path]:
    tree = {"name": "bash", "start": 0, "end": 4, "attrs": attrs}
    make_otel.write_all(tmp_path / "t", [make_otel.spans_request([tree], "svc")])
    return [tmp_path / "t.jsonl", tmp_path / "t.pb"]


READERS = {
    "gen_ai": lambda tmp_path, value: _otel(
        tmp_path,
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
         "gen_ai.tool.call.arguments": value},
    ),
    "traceloop": lambda tmp_path, value: _otel(
        tmp_path,
        {"traceloop.span.kind": "tool", "traceloop.entity.name": "bash",
         "traceloop.entity.input": value},
    ),
}  # fmt: skip


def _session_log(tmp_path: Path, value: str) -> list[Path]:
    log = tmp_path / "20260101_000000_1.jsonl"
    line = {"ts": 1.0, "agent_id": "bot", "action": "bash", "constraint": "x",
            "result": "allowed", "args": value}  # fmt: skip
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return [log]


READERS["session_log"] = _session_log


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_json_string_argument_is_its_text(tmp_path: Path, reader: str) -> None:
    for path in READERS[reader](tmp_path, json.dumps(COMMAND)):
        verdicts, ev = judged(path, CONTRACTS, tmp_path)
        calls = [e for e in ev if e["type"] == "tool_call"]
        assert [json.loads(e["args"]) for e in calls] == [{"input": COMMAND}], path.name
        assert verdicts == {"no_rm": "violated"}, path.name


@pytest.mark.parametrize("reader", sorted(READERS))
def test_text_that_only_starts_with_a_quote_stays_text(tmp_path: Path, reader: str) -> None:
    text = '"rm" -rf /tmp/x'  # not JSON: kept as recorded, so ^rm does not match it
    for path in READERS[reader](tmp_path, text):
        verdicts, ev = judged(path, CONTRACTS, tmp_path)
        calls = [e for e in ev if e["type"] == "tool_call"]
        assert [json.loads(e["args"]) for e in calls] == [{"input": text}], path.name
        assert verdicts == {"no_rm": "pass"}, path.name


def test_a_finish_reason_as_a_json_string_still_asks_for_tools(tmp_path: Path) -> None:
    # '"tool_calls"' is the finish reason tool_calls: the unrecorded call is added (§5)
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": "[]",
             "gen_ai.response.finish_reasons": json.dumps("tool_calls")}  # fmt: skip
    for path in _otel(tmp_path, attrs):
        verdicts, ev = judged(path, CONTRACTS, tmp_path)
        assert [(e["type"], e["tool"]) for e in ev][-1] == ("tool_call", None), path.name
        assert verdicts == {"no_rm": "unverifiable"}, path.name


@pytest.mark.parametrize("reader", sorted(READERS))
def test_an_object_recorded_as_text_that_is_not_json_hides_its_fields(
    tmp_path: Path, reader: str
) -> None:
    # a Python repr of the args object: its 'command' field was false, so a blacklist on
    # command passed rm -rf; now the field is unknown (SEMANTICS.md §2)
    on_command = no_rm("command", r"^rm\s+-rf")
    for path in READERS[reader](tmp_path, "{'command': 'rm -rf /tmp/x'}"):
        verdicts, _ = judged(path, on_command, tmp_path)
        assert verdicts == {"no_rm": "unverifiable"}, path.name
