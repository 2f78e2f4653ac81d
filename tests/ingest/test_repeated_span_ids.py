"""A span id written twice in one trace (SEMANTICS.md §1, §2: never a silent pass).

A re-exported span (the same span sent again) gives its events once. Two copies
that record different things are not a re-export: dropping the second copy let
``ls`` then ``rm -rf /`` under one span id pass a blacklist on ``rm -rf``. Spans
are made by the real OpenTelemetry SDK (``fixtures/make_otel.py``), in both
encodings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import judged, make_otel, no_rm

CONTRACTS = no_rm("command")


def _bash(command: str) -> object:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
             "gen_ai.tool.call.arguments": json.dumps({"command": command})}  # fmt: skip
    tree = {"name": "execute_tool bash", "start": 0, "end": 4, "attrs": attrs}
    # fresh ids each time: every request holds the same trace id and span id
    return make_otel.spans_request([tree], "svc", make_otel.FixedIds())


@pytest.mark.parametrize("suffix", [".jsonl", ".pb"])
def test_copies_that_differ_are_all_audited(tmp_path: Path, suffix: str) -> None:
    make_otel.write_all(tmp_path / "t", [_bash("ls"), _bash("rm -rf /")])
    verdicts, ev = judged((tmp_path / "t").with_suffix(suffix), CONTRACTS, tmp_path)
    assert len({e["span_id"] for e in ev}) == 1
    assert [json.loads(e["args"])["command"] for e in ev] == ["ls", "rm -rf /"]
    assert verdicts == {"no_rm": "violated"}


@pytest.mark.parametrize("suffix", [".jsonl", ".pb"])
def test_a_re_exported_span_gives_its_events_once(tmp_path: Path, suffix: str) -> None:
    make_otel.write_all(tmp_path / "t", [_bash("rm -rf /"), _bash("rm -rf /")])
    verdicts, ev = judged((tmp_path / "t").with_suffix(suffix), CONTRACTS, tmp_path)
    assert [(e["type"], e["record"]) for e in ev] == [("tool_call", 1)]
    assert verdicts == {"no_rm": "violated"}


def test_spans_without_an_id_are_never_one_span(tmp_path: Path) -> None:
    # OTLP/JSON written by hand: the SDK always sets span ids
    pairs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
             "gen_ai.tool.call.arguments": '{"command":"ls"}'}  # fmt: skip
    attrs = [{"key": k, "value": {"stringValue": v}} for k, v in pairs.items()]
    span = {"traceId": "ab" * 16, "name": "execute_tool bash", "attributes": attrs,
            "startTimeUnixNano": "1000", "endTimeUnixNano": "2000"}  # fmt: skip
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span, span]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    once = 'version: "1"\nagents:\n  "*":\n    contracts:\n      - id: bash_once\n'
    once += "        G: {pattern: idempotent, args: [bash]}\n"
    verdicts, ev = judged(path, once, tmp_path)
    assert [e["tool"] for e in ev] == ["bash", "bash"]
    assert verdicts == {"bash_once": "violated"}
