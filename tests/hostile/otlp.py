"""Trace bytes built by hand for the hostile inputs: OTLP/JSON dicts, OTLP protobuf bodies,
the Collector's length-prefixed layout, sparse files (a hole of NUL bytes costs no disk)."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

T0 = 1_700_000_000_000_000_000


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {"key": key, "value": value}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def tool_span(
    trace: str, span: str, tool: str, args: dict[str, Any], *, start: Any = None, **extra: Any
) -> dict[str, Any]:
    """A GenAI ``execute_tool`` span calling ``tool`` with ``args``."""
    attrs = [
        _kv("gen_ai.operation.name", "execute_tool"),
        _kv("gen_ai.tool.name", tool),
        _kv("gen_ai.tool.call.arguments", json.dumps(args)),
    ]
    attrs += [_kv(k.replace("__", "."), v) for k, v in extra.items()]
    return {
        "traceId": trace,
        "spanId": span,
        "name": f"execute_tool {tool}",
        "kind": 1,
        "startTimeUnixNano": str(T0 + 1000) if start is None else start,
        "endTimeUnixNano": str(T0 + 2000) if start is None else start,
        "attributes": attrs,
    }


def request(*spans: dict[str, Any], service: str = "svc") -> dict[str, Any]:
    """An OTLP/JSON ExportTraceServiceRequest of ``spans``."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_kv("service.name", service)]},
                "scopeSpans": [{"scope": {"name": "hostile"}, "spans": list(spans)}],
            }
        ]
    }


def line(obj: Any) -> bytes:
    """One JSON line (ASCII: lone surrogates written as ``\\uXXXX`` escapes, as exporters do)."""
    return json.dumps(obj, ensure_ascii=True).encode() + b"\n"


def tid(n: int) -> str:
    """A hex trace id."""
    return f"{0xAB00 + n:032x}"


def sid(n: int) -> str:
    """A hex span id."""
    return f"{0xCD00 + n:016x}"


def wide_trace(path: Path, requests: int) -> None:
    """One trace of ``requests`` × 1 000 tool spans, 1 000 per request line, at distinct times."""
    with path.open("wb") as f:
        for r in range(requests):
            spans = [
                tool_span(tid(0), f"{r * 1000 + i + 1:016x}", "read_file", {"path": "/tmp/a"})
                for i in range(1000)
            ]
            for k, s in enumerate(spans):
                s["startTimeUnixNano"] = s["endTimeUnixNano"] = str(T0 + r * 1000 + k)
            f.write(line(request(*spans)))


def ok_line(n: int, tool: str = "read_file") -> bytes:
    """A good OTLP/JSON line: one tool call in trace ``n``."""
    return line(request(tool_span(tid(n), sid(n), tool, {"path": "/workspace/a"})))


def pb_request(n: int, tool: str = "read_file") -> bytes:
    """A good OTLP protobuf ExportTraceServiceRequest body: one tool call in trace ``n``."""
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    kv = rs.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "svc"
    sp = rs.scope_spans.add().spans.add()
    sp.trace_id = bytes.fromhex(tid(n))
    sp.span_id = bytes.fromhex(sid(n))
    sp.name = f"execute_tool {tool}"
    sp.start_time_unix_nano, sp.end_time_unix_nano = T0 + 1000, T0 + 2000
    for k, v in (
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", tool),
        ("gen_ai.tool.call.arguments", '{"path": "/workspace/a"}'),
    ):
        a = sp.attributes.add()
        a.key, a.value.string_value = k, v
    return req.SerializeToString()


def delimited(*records: bytes) -> bytes:
    """The Collector's length-prefixed ``format: proto`` layout."""
    return b"".join(struct.pack(">I", len(r)) + r for r in records)


def sparse(path: Path, head: bytes, hole: int, tail: bytes) -> None:
    """``head``, ``hole`` NUL bytes (a sparse hole: no disk, no time), then ``tail``."""
    with path.open("wb") as f:
        f.write(head)
        f.seek(len(head) + hole)
        f.write(tail)
