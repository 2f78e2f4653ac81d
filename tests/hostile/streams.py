"""Hostile inputs of the stream kind: bombs, giant records, odd files, broken layouts."""

from __future__ import annotations

import gzip
import os
import socket
import struct
from pathlib import Path
from typing import Any

import zstandard
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from sponsio_audit.ingest.limits import DEFAULT

from .expect import BOMB_ZEROS, Expect
from .otlp import (
    T0,
    _kv,
    delimited,
    line,
    ok_line,
    pb_request,
    request,
    sid,
    sparse,
    tid,
    tool_span,
)


def gzip_bomb(d: Path) -> Expect:
    """A good line, then 64 MiB of zeros, gzipped (~1000:1): the bomb stops at the ratio."""
    z = gzip.compress(ok_line(1) + b"\0" * BOMB_ZEROS, 1)
    (d / "bomb.jsonl.gz").write_bytes(z)
    return Expect(
        skips=(("bomb.jsonl.gz", 2, f"limit ratio={DEFAULT.ratio}"),),
        loaded={"bomb.jsonl.gz": frozenset({1})},
    )


def zstd_bomb(d: Path) -> Expect:
    """A good line, then 256 MiB of zeros, zstd (~30 000:1)."""
    z = zstandard.ZstdCompressor(level=1).compress(ok_line(1) + b"\0" * (4 * BOMB_ZEROS))
    (d / "bomb.jsonl.zst").write_bytes(z)
    return Expect(
        skips=(("bomb.jsonl.zst", 2, f"limit ratio={DEFAULT.ratio}"),),
        loaded={"bomb.jsonl.zst": frozenset({1})},
    )


def giant_line(d: Path) -> Expect:
    """A line one byte over ``Limits.record_bytes`` between two good lines."""
    head = ok_line(1) + b'{"resourceSpans": "'
    sparse(d / "giant.jsonl", head, DEFAULT.record_bytes, b'"}\n' + ok_line(3))
    return Expect(
        skips=(("giant.jsonl", 2, f"limit record_bytes={DEFAULT.record_bytes}"),),
        loaded={"giant.jsonl": frozenset({1, 3})},
    )


def deep_nesting(d: Path) -> Expect:
    """100 000 nested brackets (a skipped line) and a 200-deep attribute (capped, kept)."""
    v: dict[str, Any] = {"stringValue": "leaf"}
    for _ in range(200):
        v = {"arrayValue": {"values": [v]}}
    span = tool_span(tid(2), sid(2), "read_file", {"p": 1})
    span["attributes"].append(_kv("nest", v))
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"
    deep_object = b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"\n"
    (d / "deep.jsonl").write_bytes(deep + line(request(span)) + deep_object)
    return Expect(
        # line 3 is read (the CLI parses under recursion.deep) and is no OTLP object
        skips=(("deep.jsonl", 1, "nested too deep"), ("deep.jsonl", 3, "")),
        loaded={"deep.jsonl": frozenset({2})},
    )


def irregular_files(d: Path) -> Expect:
    """A FIFO, a symlink to /dev/zero and a socket in the trace folder: listed, never opened."""
    os.mkfifo(d / "pipe.jsonl")
    (d / "zero.jsonl").symlink_to("/dev/zero")
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(d / "sock.jsonl"))
    finally:
        s.close()
    return Expect(
        skips=(
            ("pipe.jsonl", 0, "not a regular file (a FIFO)"),
            ("zero.jsonl", 0, "not a regular file (a character device)"),
            ("sock.jsonl", 0, "not a regular file (a socket)"),
        ),
    )


def nul_prefix(d: Path) -> Expect:
    """512 NUL bytes (a preallocated log) before good lines."""
    (d / "padded.jsonl").write_bytes(b"\0" * 512 + ok_line(1) + ok_line(2))
    return Expect(loaded={"padded.jsonl": frozenset({1, 2})})


def metrics_protobuf(d: Path) -> Expect:
    """A raw OTLP metrics body: metrics, not a phantom span."""
    req = ExportMetricsServiceRequest()
    rm = req.resource_metrics.add()
    kv = rm.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "svc"
    m = rm.scope_metrics.add().metrics.add()
    m.name, m.unit = "gen_ai.client.token.usage", "token"
    p = m.gauge.data_points.add()
    p.time_unix_nano, p.as_int = T0, 42
    (d / "metrics.pb").write_bytes(req.SerializeToString())
    return Expect(skips=(("metrics.pb", None, "metrics"),), no_spans=("metrics.pb",))


def _logs_line() -> bytes:
    return line(
        {
            "resourceLogs": [
                {
                    "resource": {"attributes": [_kv("service.name", "svc")]},
                    "scopeLogs": [
                        {"logRecords": [{"timeUnixNano": str(T0), "body": {"stringValue": "x"}}]}
                    ],
                }
            ]
        }
    )


def _metrics_line() -> bytes:
    return line({"resourceMetrics": [{"resource": {}, "scopeMetrics": []}]})


def logs_first_collector(d: Path) -> Expect:
    """A Collector file whose first line is a logs request, then trace lines."""
    (d / "collector.jsonl").write_bytes(_logs_line() + ok_line(1) + ok_line(2))
    return Expect(
        loaded={"collector.jsonl": frozenset({2, 3})},
        either=(("collector.jsonl", 1, "log"),),
    )


def mixed_signals(d: Path) -> Expect:
    """JSON lines of traces, metrics and logs interleaved: each line routed by its own key."""
    (d / "mixed.jsonl").write_bytes(ok_line(1) + _metrics_line() + ok_line(2) + _logs_line())
    return Expect(
        loaded={"mixed.jsonl": frozenset({1, 3})},
        either=(("mixed.jsonl", 2, "metric"), ("mixed.jsonl", 4, "log")),
    )


def truncated_protobuf(d: Path) -> Expect:
    """A raw body cut in half; a length-prefixed file whose second record is cut."""
    body = pb_request(1)
    (d / "raw.pb").write_bytes(body[: len(body) // 2])
    (d / "delim.pb").write_bytes(delimited(pb_request(2), pb_request(3))[:-20])
    return Expect(
        skips=(("raw.pb", 1, "invalid OTLP protobuf"), ("delim.pb", 2, "truncated record")),
        loaded={"delim.pb": frozenset({1})},
    )


def broken_json_lines(d: Path) -> Expect:
    """An unterminated JSON line and a bare number between good lines (a blank line too)."""
    (d / "mixed.jsonl").write_bytes(ok_line(1) + b'{"resourceSpans": [\n' + b"42\n\n" + ok_line(2))
    return Expect(
        skips=(("mixed.jsonl", 2, "invalid JSON"), ("mixed.jsonl", 3, "not an OTLP/JSON object")),
        loaded={"mixed.jsonl": frozenset({1, 5})},
    )


def binary_and_empty(d: Path) -> Expect:
    """A PNG, an empty file and a blank file."""
    (d / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16)
    (d / "empty.jsonl").write_bytes(b"")
    (d / "blank.json").write_bytes(b"\n\n  \n")
    return Expect(
        skips=(
            ("image.png", 0, "unrecognised format"),
            ("empty.jsonl", 0, "empty file"),
            ("blank.json", 0, "empty file"),
        )
    )


def huge_attribute(d: Path) -> Expect:
    """A 20 MB tool result: kept, cut at ``values.MAX_STR`` with a marker."""
    span = tool_span(tid(1), sid(1), "read_file", {"p": 1})
    span["attributes"].append(_kv("gen_ai.tool.call.result", "x" * (20 << 20)))
    (d / "huge.jsonl").write_bytes(line(request(span)) + ok_line(2))
    return Expect(
        loaded={"huge.jsonl": frozenset({1, 2})},
        sql=(
            (
                "SELECT count(*) FROM events WHERE ends_with(content, "
                f"'…[truncated {(20 << 20) - (1 << 20)} chars]')",
                [(1,)],
            ),
        ),
    )


def invalid_utf8(d: Path) -> Expect:
    """A line with bytes that are not UTF-8."""
    bad = ok_line(1).replace(b"read_file", b"read\xff\xfe_file")
    (d / "latin.jsonl").write_bytes(bad + ok_line(2))
    return Expect(
        skips=(("latin.jsonl", 1, "invalid UTF-8"),), loaded={"latin.jsonl": frozenset({2})}
    )


def corrupt_gzip(d: Path) -> Expect:
    """A gzip stream cut in the middle: the lines before the cut are kept, the break listed."""
    z = gzip.compress(b"".join(ok_line(i) for i in range(1, 2001)))
    (d / "cut.jsonl.gz").write_bytes(z[: len(z) // 2])
    return Expect(skips=(("cut.jsonl.gz", None, "unreadable stream"),))


def odd_attribute_types(d: Path) -> Expect:
    """Every AnyValue spelling, wrong types included: the record is kept."""
    span = tool_span(tid(1), sid(1), "read_file", {"p": 1})
    span["attributes"] += [
        {"key": "a", "value": {"doubleValue": "NaN"}},
        {"key": "b", "value": {"boolValue": "yes"}},
        {"key": "c", "value": {"kvlistValue": {"values": [{"key": 1}, 7, None]}}},
        {"key": "d", "value": {"arrayValue": {"values": "notalist"}}},
        {"key": "e", "value": {"bytesValue": 12}},
        {"key": "f", "value": None},
        {"key": ["g"], "value": {"stringValue": "x"}},
        {"key": "h", "value": {"intValue": "12abc"}},
        "not-a-kv",
    ]
    span["status"] = {"code": "STATUS_CODE_WHAT", "message": 5}
    span["kind"] = "SPAN_KIND_ODD"
    (d / "odd.jsonl").write_bytes(line(request(span)))
    return Expect(loaded={"odd.jsonl": frozenset({1})})


def many_attributes(d: Path) -> Expect:
    """A span with one attribute more than ``Limits.attributes``."""
    span = tool_span(tid(1), sid(1), "read_file", {"p": 1})
    span["attributes"] += [_kv(f"k{i}", "v") for i in range(DEFAULT.attributes)]
    (d / "wide.jsonl").write_bytes(line(request(span)) + ok_line(2))
    return Expect(
        skips=(("wide.jsonl", 1, f"limit attributes={DEFAULT.attributes}"),),
        loaded={"wide.jsonl": frozenset({2})},
    )


def oversize_proto_record(d: Path) -> Expect:
    """A length-prefixed record one byte over ``Limits.record_bytes``: read past, the next kept."""
    n = DEFAULT.record_bytes + 1
    head = delimited(pb_request(1)) + struct.pack(">I", n)
    sparse(d / "big.pb", head, n, delimited(pb_request(3)))
    return Expect(
        skips=(("big.pb", 2, f"limit record_bytes={DEFAULT.record_bytes}"),),
        loaded={"big.pb": frozenset({1, 3})},
    )


def record_bomb(d: Path) -> Expect:
    """A zstd-compressed protobuf record of 64 MiB of zeros, then a good gzip record."""
    bomb = zstandard.ZstdCompressor(level=1).compress(b"\0" * BOMB_ZEROS)
    (d / "records.pb").write_bytes(delimited(bomb, gzip.compress(pb_request(2))))
    return Expect(
        skips=(("records.pb", 1, f"limit ratio={DEFAULT.ratio}"),),
        loaded={"records.pb": frozenset({2})},
    )
