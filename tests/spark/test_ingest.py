"""``sponsio_audit.spark.ingest`` reads files into the tables the store ingest makes.

Issue 17, problem 6: the ingest state (file ids, duplicate checks, record
numbers, the conversation key) lived in the DuckDB store, so ingest could not
run in parallel tasks. Here the driver plans it and the executors decode
line-aligned byte ranges (cut every 2 kB, so a file is read by several tasks)
with the project's own decoders; the tables must equal ``ingest`` into a
store, row for row: the same record numbers, the same skip reasons, a trace
whose spans are split over two files put back together, a duplicate file
read once, and (with a config) the verdicts of ``api.audit``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import load_config
from sponsio_audit.ingest import Store, ingest

REPO = Path(__file__).resolve().parents[2]
OTEL = REPO / "fixtures" / "otel"
DEMO = REPO / "fixtures" / "demo"
TABLES = ("files", "skipped", "spans", "events", "decisions")


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: Any) -> Path:
    """OTLP fixtures, a trace's spans over two files with a bad line, a duplicate file."""
    d = tmp_path_factory.mktemp("spark-ingest")
    for name in ("genai.jsonl", "genai.pb", "openinference.jsonl", "sponsio.jsonl"):
        shutil.copy(OTEL / name, d / name)
    shutil.copy(OTEL / "genai.jsonl", d / "genai-again.jsonl")  # same bytes: read once
    lines = (DEMO / "traces" / "workflow.otlp.jsonl").read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    assert half >= 1
    (d / "part1.jsonl").write_bytes(b"".join(lines[:half]) + b"{not json\n\n")
    (d / "part2.jsonl").write_bytes(b"".join(lines[half:]))
    shutil.copy(DEMO / "traces" / "metrics.otlp.jsonl", d / "metrics.jsonl")  # skipped whole
    # two traces of one conversation, the later trace's file first
    (d / "conv1.jsonl").write_text(_tool_span("00" * 15 + "02", "22" * 8, "deploy", 30) + "\n")
    (d / "conv2.jsonl").write_text(
        _tool_span("00" * 15 + "01", "11" * 8, "approve", 10)
        + "\n"
        + _tool_span("00" * 15 + "02", "33" * 8, "approve", 20, conversation=None)
        + "\n"
    )
    return d


def _tool_span(
    trace: str, span: str, tool: str, t: int, conversation: str | None = "conv-x"
) -> str:
    attrs = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.name", "value": {"stringValue": tool}},
    ]
    if conversation:
        attrs.append({"key": "gen_ai.conversation.id", "value": {"stringValue": conversation}})
    span_doc = {
        "traceId": trace,
        "spanId": span,
        "name": f"execute_tool {tool}",
        "startTimeUnixNano": str(t * 10**9),
        "endTimeUnixNano": str(t * 10**9 + 1),
        "attributes": attrs,
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span_doc]}]}]})


def test_spark_ingest_gives_the_store_tables_and_evaluates_in_the_same_stage(spark, corpus):
    from sponsio_audit.spark import ingest as spark_ingest

    cfg = load_config([DEMO / "sponsio.yaml"])
    res = audit([str(corpus)], cfg)
    assert res.violations.num_rows > 0
    s = res.summary
    assert s.skipped >= 2  # the bad line, the metrics file
    got = spark_ingest(spark, [str(corpus)], config=cfg, range_bytes=8192)
    assert got.duplicates == 1
    tables = got.arrow()  # every table in one job
    for name in TABLES:
        assert _rows(tables[name]) == _rows(res.table(name)), name
    assert _rows(tables["verdicts"]) == _rows(res.verdicts)
    assert _rows(tables["violations"]) == _rows(res.violations)
    # the DataFrames hold the same rows
    assert got.violations is not None
    assert _rows(got.violations.toArrow()) == _rows(res.violations)
    # the bad line is listed with its line number in its file
    bad = [r for r in tables["skipped"].to_pylist() if "invalid JSON" in r["reason"]]
    lines = (DEMO / "traces" / "workflow.otlp.jsonl").read_bytes().splitlines()
    assert [r["record"] for r in bad] == [len(lines) // 2 + 1]


def test_spark_ingest_groups_by_conversation_as_the_store_does(spark, corpus):
    from sponsio_audit.spark import ingest as spark_ingest

    store = Store.open()
    ingest([str(corpus)], store, group_by="conversation")
    expected = store.con.sql("SELECT * FROM events").to_arrow_table()
    got = spark_ingest(spark, [str(corpus)], group_by="conversation", range_bytes=8192)
    assert _rows(got.events.toArrow()) == _rows(expected)
    # both traces of conv-x are one trace of the conversation, in time order
    conv = [(r["seq"], r["tool"]) for r in expected.to_pylist() if r["trace_id"] == "conv-x"]
    assert sorted(conv) == [(0, "approve"), (1, "approve"), (2, "deploy")]
