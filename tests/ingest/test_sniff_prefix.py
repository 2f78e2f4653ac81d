"""A length-prefixed protobuf whose 4-byte length looks like padding and JSON is protobuf."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sponsio_audit.ingest.sniff import sniff

from .conftest import load


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
