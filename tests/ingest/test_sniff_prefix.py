"""A length-prefixed protobuf whose 4-byte length looks like padding and JSON is protobuf;
JSON after blank lines, whose first bytes look like a protobuf's, is JSON; blank lines alone
are an empty file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sponsio_audit.ingest.sniff import sniff

from .conftest import OTEL, load


def _request(size: int) -> bytes:
    """A real ExportTraceServiceRequest of exactly ``size`` bytes (a span name pads it)."""
    for n in range(size):
        req = ExportTraceServiceRequest()
        span = req.resource_spans.add().scope_spans.add().spans.add()
        span.trace_id, span.span_id, span.name = b"\x01" * 16, b"\x02" * 8, "x" * n
        data = req.SerializeToString()
        if len(data) == size:
            return data
    raise AssertionError(size)


def test_a_length_of_nul_nul_newline_bracket_is_not_json(tmp_path: Path) -> None:
    # 2651 = 0x00000A5B: the prefix reads as NUL padding, a newline and '['
    body = _request(0x0A5B)
    path = tmp_path / "collector.pb"
    path.write_bytes(len(body).to_bytes(4, "big") + body)
    assert sniff(lambda: path.open("rb")) == ("otlp_proto", "delimited")
    _store, summary = load(path)
    assert (summary.spans, summary.skipped) == (1, 0)


def _spans(store: Any) -> list[tuple[Any, ...]]:
    return store.con.execute("SELECT trace_id, span_id, name FROM spans ORDER BY ALL").fetchall()


@pytest.mark.parametrize(
    "lead", [b"\n\n\n", b"\n" * 20, b"\r\n" * 9, b"\xef\xbb\xbf\n\n\n", b" \n\t\n\n"]
)
def test_blank_lines_before_json_lines_are_not_a_protobuf(tmp_path: Path, lead: bytes) -> None:
    """b"\\n\\n\\n{" starts like a protobuf request (field 1, length 10, field 1): a JSON-lines
    log that begins with blank lines lost all its traces as "invalid OTLP protobuf"."""
    lines = (OTEL / "genai.jsonl").read_bytes()
    plain, padded = tmp_path / "plain.jsonl", tmp_path / "padded.jsonl"
    plain.write_bytes(lines)
    padded.write_bytes(lead + lines)
    assert sniff(lambda: padded.open("rb"))[0] == "otlp_json"
    want, want_summary = load(plain)
    got, summary = load(padded)
    assert (summary.spans, summary.skipped) == (want_summary.spans, 0) and summary.spans > 0
    assert _spans(got) == _spans(want)
    blank = lead.count(b"\n")  # a record is numbered by its line
    assert got.con.execute("SELECT DISTINCT record FROM spans").fetchall() == [(1 + blank,)]


@pytest.mark.parametrize(
    "body", [b"\n\n\n", b"\n" * 40, b"\r\n" * 5, b"\n\x00\n\x00\n", b"\n" * 70_000]
)
def test_a_file_of_blank_lines_is_empty(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_bytes(body)
    assert sniff(lambda: path.open("rb")) == ("empty", "none")
    store, summary = load(path)
    assert (summary.records, summary.skipped) == (1, 1)
    assert store.con.execute("SELECT record, reason FROM skipped").fetchall() == [(0, "empty file")]


def test_a_json_document_after_blank_lines_is_json_not_a_length_prefix(tmp_path: Path) -> None:
    """b"\\n\\n\\n{\\n" reads as a 168 MB length prefix and a message tag: the file is shorter."""
    doc = json.loads((OTEL / "genai.jsonl").read_bytes())
    path = tmp_path / "pretty.json"
    path.write_bytes(b"\n\n\n" + json.dumps(doc, indent=2).encode())
    assert sniff(lambda: path.open("rb"))[0] != "otlp_proto"
    _store, summary = load(path)
    assert summary.skipped == 0 and summary.spans > 0
