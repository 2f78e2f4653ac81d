"""A span's end time before its start is no end time (SEMANTICS.md §5: latency unknown).

OTLP protobuf cannot tell an unset ``end_time_unix_nano`` from 0, and a span
exported before it ended carries 0 there. Read as a time, that gave a negative
duration, so ``latency_budget`` *passed* a call whose length nobody recorded.
The spans are made by the real OpenTelemetry SDK; the end is cleared on the
protobuf request (and so written as 0 in its OTLP/JSON rendering too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import judged, make_otel

CONTRACTS = """
version: "1"
agents:
  "*":
    contracts:
      - id: slow
        G: {pattern: latency_budget, args: [fetch, 1000]}
"""


def _judged(tmp_path: Path, req: Any) -> list[tuple[str, list[dict[str, Any]]]]:
    """(the latency contract's verdict, events) of ``req`` written as OTLP/JSON, then protobuf."""
    make_otel.write_all(tmp_path / "t", [req])
    out = []
    for ext in (".jsonl", ".pb"):
        verdicts, evs = judged(tmp_path / f"t{ext}", CONTRACTS, tmp_path)
        out.append((verdicts["slow"], evs))
    return out


@pytest.mark.parametrize(
    ("end_ms", "want", "duration_ms"),
    [(None, "unverifiable", None), (500, "pass", 500), (3000, "violated", 3000)],
    ids=["unset", "fast", "slow"],
)
def test_an_unset_end_time_makes_latency_unverifiable(
    tmp_path: Path, end_ms: int | None, want: str, duration_ms: int | None
) -> None:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fetch"}
    tree = {"name": "execute_tool fetch", "start": 100, "end": 100 + (end_ms or 1), "attrs": attrs}
    req = make_otel.spans_request([tree], "svc")
    if end_ms is None:
        req.resource_spans[0].scope_spans[0].spans[0].ClearField("end_time_unix_nano")
    for verdict, (e,) in _judged(tmp_path, req):
        assert verdict == want
        assert e["duration_ns"] == (None if duration_ms is None else duration_ms * 1_000_000)


def test_an_unset_start_time_leaves_the_duration_missing(tmp_path: Path) -> None:
    # start 0 (unset) and a real end: the duration is not "since 1970", so no violation
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fetch"}
    req = make_otel.spans_request([{"name": "t", "start": 0, "end": 5, "attrs": attrs}], "svc")
    req.resource_spans[0].scope_spans[0].spans[0].ClearField("start_time_unix_nano")
    for verdict, (e,) in _judged(tmp_path, req):
        assert verdict == "unverifiable"
        assert e["duration_ns"] is None
