"""Real files from other projects, used as they are (../shared/data/external)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import check, events, load, make_otel, rows

WEATHER_PROMPT = (
    "user: Weather in Paris?\n"
    "assistant: Absolutely! Let me check the weather for you.\n"
    'tool_call get_weather({"location":"Paris"})\n'
    "tool: rainy, 57°F"
)
WEATHER_ANSWER = "The weather in Paris is currently rainy with a temperature of 57°F."


def test_otlp_spec_example(external: Path, tmp_path: Path) -> None:
    store, s = load(external / "opentelemetry-proto_examples_trace.json", db=tmp_path / "t.db")
    assert (s.files, s.records, s.spans, s.skipped) == (1, 1, 1, 0)
    (sp,) = rows(store, "SELECT * FROM spans")
    assert sp["trace_id"] == "5b8efff798038103d269b633813fc60c"  # upper-case hex lowered
    assert sp["span_id"] == "eee19b7ec3c1b174"
    assert sp["parent_span_id"] == "eee19b7ec3c1b173"
    assert sp["name"] == "I'm a server span"
    assert (sp["kind"], sp["start_ns"], sp["end_ns"]) == (
        "SERVER",
        1544712660000000000,
        1544712661000000000,
    )
    assert (sp["service"], sp["scope"], sp["status"]) == ("my.service", "my.library", "UNSET")
    assert json.loads(sp["attributes"]) == {"my.span.attr": "some value"}
    assert json.loads(sp["resource"]) == {"service.name": "my.service"}
    assert events(store) == []  # a plain server span is no agent event
    (f,) = rows(store, "SELECT * FROM files")
    assert (f["format"], f["records"], f["skipped"]) == ("otlp_json", 1, 0)


def _export(tmp_path: Path, attrs: dict[str, Any], name: str) -> list[Path]:
    tree = {"name": name, "start": 0, "end": 3, "attrs": attrs}
    req = make_otel.spans_request([tree], "ext-svc")
    make_otel.write_all(tmp_path / "span", [req])
    return [tmp_path / "span.jsonl", tmp_path / "span.pb"]


def _attrs(external: Path, name: str) -> dict[str, Any]:
    return json.loads((external / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", [0, 1])
def test_genai_client_span(external: Path, tmp_path: Path, fmt: int) -> None:
    a = _attrs(external, "openinference_otel_genai_client_span_tool_calls.attrs.json")
    store, _ = load(_export(tmp_path, a, "chat gpt-4")[fmt])
    req, resp = events(store)
    check(
        req,
        type="llm_request",
        prompt=WEATHER_PROMPT,
        system_prompt="",
        agent="ext-svc",
        convention="gen_ai",
    )
    check(
        resp,
        type="llm_response",
        content=WEATHER_ANSWER,
        tokens_in=97,
        tokens_out=52,
        tokens_total=149,
        inferred=False,
    )


@pytest.mark.parametrize("fmt", [0, 1])
def test_genai_deprecated_client_span(external: Path, tmp_path: Path, fmt: int) -> None:
    a = _attrs(external, "openinference_otel_genai_deprecated_client_span_tool_calls.attrs.json")
    store, _ = load(_export(tmp_path, a, "chat gpt-4")[fmt])
    req, resp = events(store)
    check(
        req,
        type="llm_request",
        prompt=WEATHER_PROMPT,
        system_prompt="",
        convention="gen_ai_deprecated",
    )
    # gen_ai.completion is {"text": ..., "finish_reason": ...}
    check(resp, type="llm_response", content=WEATHER_ANSWER, tokens_in=97, tokens_out=52)


@pytest.mark.parametrize("fmt", [0, 1])
def test_genai_tool_execution_span(external: Path, tmp_path: Path, fmt: int) -> None:
    a = _attrs(external, "openinference_otel_genai_tool_execution_span.attrs.json")
    store, _ = load(_export(tmp_path, a, "execute_tool get_weather")[fmt])
    (e,) = events(store)
    # the non-standard "input"/"output" keys are not gen_ai.tool.call.arguments/result
    check(
        e,
        type="tool_call",
        tool="get_weather",
        args=None,
        content=None,
        agent="ext-svc",
        convention="gen_ai",
        start_ns=make_otel.T0,
        duration_ns=3 * make_otel.MS,
    )


@pytest.mark.parametrize("fmt", [0, 1])
def test_openinference_client_span(external: Path, tmp_path: Path, fmt: int) -> None:
    a = _attrs(external, "openinference_client_span_tool_calls.attrs.json")
    store, _ = load(_export(tmp_path, a, "ChatCompletion")[fmt])
    req, resp = events(store)
    check(
        req, type="llm_request", prompt=WEATHER_PROMPT, system_prompt="", convention="openinference"
    )
    check(
        resp,
        type="llm_response",
        content=WEATHER_ANSWER,
        tokens_in=97,
        tokens_out=52,
        tokens_total=149,
    )
