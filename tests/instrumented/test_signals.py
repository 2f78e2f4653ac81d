"""OTLP logs in every wrapping ingest accepts, and records routed by their own signal.

The bytes are the real ones (the official instrumentation's export,
fixtures/instrumented/openai_v2_logs.*); the wrappings (plain, zstd, per-record
zstd/gzip, one pretty-printed document) are made here from them. Whatever the
wrapping, the events equal those of the committed gzip files. A metrics record
in the middle of a file is skipped with its reason and costs no trace record; a
logs record with no GenAI log record is skipped with its reason.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from sponsio_audit.ingest import Store

from .conftest import FIX, load

COMBO = "openai_v2_logs"


def _records(path: Path) -> list[bytes]:
    data = gzip.decompress(path.read_bytes())
    out, i = [], 0
    while i < len(data):
        n = int.from_bytes(data[i : i + 4], "big")
        out.append(data[i + 4 : i + 4 + n])
        i += 4 + n
    return out


def _delimited(records: list[bytes]) -> bytes:
    return b"".join(len(r).to_bytes(4, "big") + r for r in records)


def _events(store: Store) -> list[tuple[Any, ...]]:
    cols = "trace_id, seq, type, tool, args, content, prompt, system_prompt, tokens_total"
    return store.con.execute(f"SELECT {cols} FROM events ORDER BY trace_id, seq").fetchall()


def _skipped(store: Store) -> list[tuple[int, str]]:
    return store.con.execute("SELECT record, reason FROM skipped ORDER BY record").fetchall()


@pytest.fixture(scope="module")
def baseline() -> list[tuple[Any, ...]]:
    return _events(load(f"{COMBO}.traces.pb.gz", f"{COMBO}.logs.pb.gz"))


def _metrics_request() -> ExportMetricsServiceRequest:
    req = ExportMetricsServiceRequest()
    m = req.resource_metrics.add().scope_metrics.add().metrics.add()
    m.name = "gen_ai.client.token.usage"
    m.unit = "{token}"
    m.histogram.data_points.add().count = 3
    return req


def _wrap(kind: str, logs: list[bytes], tmp: Path) -> Path:
    p = tmp / f"logs.{kind}"
    if kind == "pb":
        p.write_bytes(_delimited(logs))
    elif kind == "pb.zst":
        p.write_bytes(zstandard.ZstdCompressor().compress(_delimited(logs)))
    elif kind == "record-zstd.pb":  # the Collector's per-record compression
        z = zstandard.ZstdCompressor()
        p.write_bytes(_delimited([z.compress(r) for r in logs]))
    elif kind == "record-gzip.pb":
        p.write_bytes(_delimited([gzip.compress(r) for r in logs]))
    elif kind == "raw.pb":  # one request body (concatenated messages merge their lists)
        p.write_bytes(b"".join(logs))
    elif kind == "raw.pb.gz":
        p.write_bytes(gzip.compress(b"".join(logs)))
    elif kind == "jsonl":
        p.write_bytes(gzip.decompress((FIX / f"{COMBO}.logs.jsonl.gz").read_bytes()))
    return p


KINDS = ["pb", "pb.zst", "record-zstd.pb", "record-gzip.pb", "raw.pb", "raw.pb.gz", "jsonl"]


@pytest.mark.parametrize("kind", KINDS)
def test_logs_in_every_wrapping(kind: str, tmp_path: Path, baseline: list) -> None:
    logs = _records(FIX / f"{COMBO}.logs.pb.gz")
    p = _wrap(kind, logs, tmp_path)
    store = load(p, f"{COMBO}.traces.jsonl.gz")
    assert _skipped(store) == []
    assert _events(store) == baseline


def test_logs_as_one_pretty_printed_document(tmp_path: Path, baseline: list) -> None:
    lines = gzip.decompress((FIX / f"{COMBO}.logs.jsonl.gz").read_bytes()).splitlines()
    docs = [json.loads(x) for x in lines]
    merged = {"resourceLogs": [rl for d in docs for rl in d["resourceLogs"]]}
    p = tmp_path / "logs.json"
    p.write_text(json.dumps(merged, indent=2))
    store = load(f"{COMBO}.traces.pb.gz", p)
    assert _skipped(store) == []
    assert _events(store) == baseline


def test_metrics_records_are_skipped_and_the_rest_is_read(tmp_path: Path, baseline: list) -> None:
    metrics = _metrics_request()
    logs = _records(FIX / f"{COMBO}.logs.pb.gz")
    pb = tmp_path / "mixed.pb"
    pb.write_bytes(_delimited([*logs[:1], metrics.SerializeToString(), *logs[1:]]))
    lines = gzip.decompress((FIX / f"{COMBO}.collector.jsonl.gz").read_bytes()).splitlines()
    from google.protobuf.json_format import MessageToJson

    js = tmp_path / "collector.jsonl"
    metric_line = MessageToJson(metrics, indent=None).encode()
    js.write_bytes(b"\n".join([lines[0], metric_line, *lines[1:]]) + b"\n")
    traces = len(_records(FIX / f"{COMBO}.traces.pb.gz"))
    for files, n in (
        ([f"{COMBO}.traces.pb.gz", pb], traces + len(logs) + 1),
        ([js], len(lines) + 1),
    ):
        store = load(*files)
        assert _skipped(store) == [(2, "OTLP metrics, not traces")]
        assert _events(store) == baseline
        # every record is counted: read or skipped
        assert store.con.execute("SELECT sum(records), sum(skipped) FROM files").fetchall() == [
            (n, 1)
        ]


def test_non_genai_log_records_are_counted_and_skipped(tmp_path: Path, baseline: list) -> None:
    logs = _records(FIX / f"{COMBO}.logs.pb.gz")
    plain = ExportLogsServiceRequest()
    rec = plain.resource_logs.add().scope_logs.add().log_records.add()
    rec.body.string_value = "GET /healthz 200"
    rec.trace_id, rec.span_id = b"\x01" * 16, b"\x02" * 8
    mixed = ExportLogsServiceRequest.FromString(logs[0])
    mixed.resource_logs[0].scope_logs[0].log_records.append(rec)
    p = tmp_path / "logs.pb"
    p.write_bytes(_delimited([plain.SerializeToString(), mixed.SerializeToString(), *logs[1:]]))
    store = load(f"{COMBO}.traces.pb.gz", p)
    assert _skipped(store) == [
        (1, "OTLP logs: none of its 1 log records is a GenAI event with trace and span id")
    ]
    assert _events(store) == baseline


def test_tool_calls_of_a_user_simulator_are_its_tool_calls(tmp_path: Path) -> None:
    run = {
        "metadata": {"trace_id": "t1", "agent": "support"},
        "messages": [
            {"role": "system", "content": "Help the customer."},
            {
                "role": "user",
                "name": "customer_sim",
                "content": "I changed my address.",
                "tool_calls": [
                    {
                        "id": "u1",
                        "type": "function",
                        "function": {"name": "update_address", "arguments": '{"zip": "75001"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "u1", "content": "address updated"},
            {"role": "assistant", "content": "Noted."},
        ],
    }
    p = tmp_path / "run.json"
    p.write_text(json.dumps(run))
    store = load(p)
    rows = store.con.execute(
        "SELECT type, agent, tool, args, content FROM events ORDER BY seq"
    ).fetchall()
    assert rows == [
        ("tool_call", "customer_sim", "update_address", '{"zip":"75001"}', "address updated"),
        ("llm_request", "support", None, None, None),
        ("llm_response", "support", None, None, "Noted."),
    ]


def test_worker_processes_read_logs_the_same(baseline: list) -> None:
    from sponsio_audit.ingest import ingest

    store = Store.open(None)
    files = [FIX / f"{COMBO}.logs.jsonl.gz", FIX / f"{COMBO}.traces.pb.gz"]
    ingest(files, store, jobs=2)
    assert _events(store) == baseline
