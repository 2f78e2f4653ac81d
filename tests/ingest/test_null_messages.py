"""A messages attribute recorded as null holds no input or output (SEMANTICS.md §5).

"Missing" means the input did not record the field; a null is no recorded value,
so the prompt, system prompt and output text it gives are missing and the
content contracts over them are *unverifiable*, never a pass. A recorded empty
value (an empty list, an empty string) is not missing: those contracts pass.
Spans are made by the real OpenTelemetry SDK (``fixtures/make_otel.py``); the
empty ``AnyValue`` is an SDK request with one attribute's value cleared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import judged, make_otel

CONTRACTS = """
version: "1"
agents:
  "*":
    contracts:
      - id: pii
        G: {pattern: no_pii}
      - id: injection
        G: {pattern: prompt_injection_marker, args: ["ignore previous"]}
      - id: length
        G: {ltl: "G(context_length() <= 1000)"}
"""

CURRENT = ("gen_ai.input.messages", "gen_ai.output.messages")
DEPRECATED = ("gen_ai.prompt", "gen_ai.completion")


def _request(keys: tuple[str, str], value: str, extra: dict[str, Any] | None = None) -> Any:
    attrs = {"gen_ai.operation.name": "chat", keys[0]: value, keys[1]: value, **(extra or {})}
    tree = {"name": "chat m", "start": 0, "end": 4, "attrs": attrs}
    return make_otel.spans_request([tree], "svc")


def _verdicts(tmp_path: Path, req: Any) -> tuple[dict[str, str], list[dict[str, Any]]]:
    make_otel.write_all(tmp_path / "t", [req])
    got = [judged(tmp_path / f"t{ext}", CONTRACTS, tmp_path) for ext in (".jsonl", ".pb")]
    assert got[0] == got[1]  # both encodings read alike
    return got[0]


@pytest.mark.parametrize("keys", [CURRENT, DEPRECATED], ids=["current", "deprecated"])
def test_null_messages_are_missing_so_content_contracts_are_unverifiable(
    tmp_path: Path, keys: tuple[str, str]
) -> None:
    verdicts, ev = _verdicts(tmp_path, _request(keys, "null"))
    assert set(verdicts.values()) == {"unverifiable"} and len(verdicts) == 3
    req, resp = ev[0], ev[1]
    assert (req["type"], req["prompt"], req["system_prompt"]) == ("llm_request", None, None)
    assert (resp["type"], resp["content"]) == ("llm_response", None)


def test_empty_anyvalue_is_missing(tmp_path: Path) -> None:
    req = _request(CURRENT, "x")
    for kv in req.resource_spans[0].scope_spans[0].spans[0].attributes:
        if kv.key in CURRENT:
            kv.value.Clear()  # an AnyValue with no value set: OTLP's empty value
    verdicts, ev = _verdicts(tmp_path, req)
    assert set(verdicts.values()) == {"unverifiable"}
    assert (ev[0]["prompt"], ev[1]["content"]) == (None, None)


@pytest.mark.parametrize("value", ["[]", '""'])
def test_recorded_empty_messages_are_not_missing(tmp_path: Path, value: str) -> None:
    verdicts, ev = _verdicts(tmp_path, _request(CURRENT, value))
    # nothing was said, and that was recorded: no PII, no marker, an input of 0 characters
    assert verdicts == {"pii": "pass", "injection": "pass", "length": "pass"}
    assert (ev[0]["prompt"], ev[0]["system_prompt"], ev[1]["content"]) == ("", "", "")


def test_null_input_keeps_the_recorded_system_instructions(tmp_path: Path) -> None:
    instructions = '[{"type": "text", "content": "Be terse."}]'
    req = _request(CURRENT, "null", {"gen_ai.system_instructions": instructions})
    verdicts, ev = _verdicts(tmp_path, req)
    assert ev[0]["prompt"] is None and ev[0]["system_prompt"] == "Be terse."
    assert verdicts["injection"] == "unverifiable" and verdicts["length"] == "unverifiable"


ARGS_CONTRACT = """
version: "1"
agents:
  "*":
    contracts:
      - id: no_rm
        G: {pattern: arg_blacklist, args: [bash, cmd, ["rm -rf"]]}
"""


@pytest.mark.parametrize("value", ["null", '{"cmd": "ls"}'], ids=["null", "object"])
def test_tool_arguments_recorded_as_null_are_missing(tmp_path: Path, value: str) -> None:
    # a null is no recorded value here too: not {"input": null}, whose lack of "cmd" passed
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
             "gen_ai.tool.call.arguments": value}  # fmt: skip
    tree = {"name": "execute_tool bash", "start": 0, "end": 4, "attrs": attrs}
    make_otel.write_all(tmp_path / "t", [make_otel.spans_request([tree], "svc")])
    log = tmp_path / "20260101_000000_1.jsonl"  # a Sponsio session log with the same args
    line = {"ts": 1.0, "agent_id": "bot", "action": "bash", "constraint": "x",
            "result": "allowed", "args": value}  # fmt: skip
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    want = "unverifiable" if value == "null" else "pass"
    for path in (tmp_path / "t.jsonl", tmp_path / "t.pb", log):
        verdicts, evs = judged(path, ARGS_CONTRACT, tmp_path)
        assert verdicts == {"no_rm": want}, path.name
        assert evs[0]["args"] == (None if value == "null" else value.replace(" ", ""))
