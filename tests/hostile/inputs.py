"""A generator of hostile trace inputs, each written beside one good file, with what must happen.

Every ``Case`` writes its files into a fresh folder (``build``) and returns an
``Expect``: which records must be listed as skipped (file, record, a fragment
of the reason), which records must be loaded, and SQL facts about the store.
The expectations come from the issue (13) and ARCHITECTURE.md's accounting
rule, not from the code's output: a bad value costs at most its record, a
bound hit names the limit and its value, nothing after a bad record is lost.

Inputs are built from plain bytes and dicts here (OTLP/JSON by hand, OTLP
protobuf with the generated ``opentelemetry-proto`` classes), sized so the
whole suite stays fast: a bomb only needs to pass the ratio check's floor
(``Limits.ratio_floor``), not to be gigabytes; ``bench/hostile.py`` runs the
issue's full-size ones and prints time and peak RSS.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sponsio_audit.ingest.limits import DEFAULT

REPO = Path(__file__).resolve().parents[2]
GOOD_SOURCE = REPO / "fixtures" / "otel" / "openllmetry.jsonl"  # 1 record, 4 spans, 4 events
GOOD = "good.jsonl"
GOOD_EVENTS = 4
T0 = 1_700_000_000_000_000_000
MARK = "<evilmark onmouseover=alert(1)>"
"""An HTML tag that must never reach a report unescaped."""
ANSI = "\x1b[31m\x1b]8;;x\x07"
"""A colour and an OSC-8 hyperlink escape that must never reach the terminal."""
RICH = "[bold red]rich[/bold red]"
"""rich console markup that must be printed as text, not interpreted."""


@dataclass(frozen=True)
class Expect:
    """What scanning a case's folder must give.

    ``skips``: (file name, record or None for any, reason fragment), all of them
    and no other skip; ``loaded``: file name → records that must have rows;
    ``either``: (file, record, fragment) loaded, or skipped with the fragment;
    ``sql``: (query, expected rows) on the store; ``no_spans``: files that must
    add no span; ``markup``: the case plants markup in reported content.
    """

    skips: tuple[tuple[str, int | None, str], ...] = ()
    loaded: dict[str, frozenset[int]] = field(default_factory=dict)
    either: tuple[tuple[str, int, str], ...] = ()
    sql: tuple[tuple[str, list[tuple[Any, ...]]], ...] = ()
    no_spans: tuple[str, ...] = ()
    markup: bool = False


@dataclass(frozen=True)
class Case:
    """One hostile input: a name, a builder writing it into a folder, and an xfail reason."""

    name: str
    build: Callable[[Path], Expect]
    xfail: str | None = None


ROUTING = "routing lands with issue 11"


# -- OTLP/JSON and protobuf by hand ----------------------------------------------------------


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


BOMB_ZEROS = 64 << 20
"""Zeros in a test bomb: past ``ratio_floor`` (16 MiB), at a ratio of ~1000 (gzip) or more."""


def _good(d: Path) -> None:
    (d / GOOD).write_bytes(GOOD_SOURCE.read_bytes())


def _events_of(file: str) -> str:
    return (
        f"SELECT count(*) FROM events e JOIN files f USING (file_id) WHERE f.path LIKE '%/{file}'"
    )


# -- the cases -------------------------------------------------------------------------------


def lone_surrogate(d: Path) -> Expect:
    """Half an emoji (``\\ud83c``) in a span name and a result: the field is kept with U+FFFD."""
    bad = tool_span(tid(1), sid(1), "read_file", {"path": "/workspace/\ud83c"})
    bad["name"] = "execute_tool read_file \ud83c"
    bad["attributes"].append(_kv("gen_ai.tool.call.result", "ok \ud83c"))
    (d / "surrogate.jsonl").write_bytes(line(request(bad)) + ok_line(2))
    (d / "native.jsonl").write_bytes(
        line({"type": "tool_call", "tool": "bash", "args": {"c": "x\udc00"}, "ts": 1.7e9})
        + line({"type": "tool_call", "tool": "read", "ts": 1.7e9 + 1})
    )
    return Expect(
        loaded={"surrogate.jsonl": frozenset({1, 2}), "native.jsonl": frozenset({1, 2})},
        sql=(
            ("SELECT content FROM events WHERE content LIKE '%ok%'", [("ok \ufffd",)]),
            ("SELECT count(*) FROM events WHERE args LIKE '%\ufffd%'", [(2,)]),
        ),
    )


def int64_overflow(d: Path) -> Expect:
    """Timestamps and ``intValue`` beyond int64 (string and number): only the field is lost."""
    huge = "99999999999999999999"
    s1 = tool_span(tid(1), sid(1), "read_file", {"p": 1}, start=huge)
    s1["attributes"].append(_kv("gen_ai.usage.input_tokens", {"intValue": huge}))
    s1["attributes"].append(_kv("n", {"intValue": 2**70}))
    s2 = tool_span(tid(2), sid(2), "read_file", {"p": 2}, start=str(2**64))
    (d / "overflow.jsonl").write_bytes(line(request(s1)) + line(request(s2)) + ok_line(3))
    return Expect(
        loaded={"overflow.jsonl": frozenset({1, 2, 3})},
        sql=(
            (
                f"SELECT count(*) FROM spans WHERE trace_id IN ('{tid(1)}', '{tid(2)}') "
                "AND start_ns IS NULL AND end_ns IS NULL",
                [(2,)],
            ),
            (f"SELECT tokens_in FROM events WHERE trace_id = '{tid(1)}'", [(None,)]),
        ),
    )


def session_ts_overflow(d: Path) -> Expect:
    """``ts: 9.5e18`` in a Sponsio session log (an OverflowError in store.flush before)."""
    rows = [
        {"ts": 9.5e18, "agent_id": "a", "action": "bash", "contract_id": "c", "result": "allowed"},
        {"ts": 1.7e9, "agent_id": "a", "action": "read", "contract_id": "c", "result": "allowed"},
        {"ts": -9.5e18, "agent_id": "a", "action": "ls", "contract_id": "c", "result": "allowed"},
    ]
    (d / "session.jsonl").write_bytes(b"".join(line(r) for r in rows))
    return Expect(
        loaded={"session.jsonl": frozenset({1, 2, 3})},
        sql=(
            (_events_of("session.jsonl") + " AND e.start_ns IS NULL", [(2,)]),
            ("SELECT count(*) FROM decisions", [(3,)]),
        ),
    )


def native_tokens_overflow(d: Path) -> Expect:
    """``tokens_in: 1e20`` in a native trace: tokens unknown, the event kept."""
    (d / "native.jsonl").write_bytes(
        line({"type": "llm_response", "ts": 1.7e9, "tokens_in": 1e20, "tokens_out": 2**64})
        + line({"type": "tool_call", "tool": "read", "ts": 1.7e9 + 1, "duration_ns": -(2**70)})
    )
    return Expect(
        loaded={"native.jsonl": frozenset({1, 2})},
        sql=(
            (
                _events_of("native.jsonl")
                + " AND e.tokens_in IS NULL AND e.tokens_out IS NULL AND e.duration_ns IS NULL",
                [(2,)],
            ),
        ),
    )


TRANSCRIPT_MESSAGES = 6000


def big_transcript(d: Path) -> Expect:
    """A 6 000-message transcript (a ChunkedArray TypeError before): every assistant message an
    llm_request and llm_response pair, each prompt all messages before it.

    One message in 100 is the assistant's, so prompts add up to ~2 MB: the quadratic
    full-size case (every other message) is ``bench/hostile.py``'s.
    """
    msgs = [
        {"role": "assistant" if i % 100 == 99 else "user", "content": f"m{i}"}
        for i in range(TRANSCRIPT_MESSAGES)
    ]
    (d / "chat.json").write_bytes(json.dumps(msgs).encode())
    # the last request's prompt renders the 5 999 messages before it, "role: text" joined by \n
    last = "\n".join(f"{m['role']}: {m['content']}" for m in msgs[: TRANSCRIPT_MESSAGES - 1])
    return Expect(
        loaded={"chat.json": frozenset({1})},
        sql=(
            (_events_of("chat.json"), [(2 * TRANSCRIPT_MESSAGES // 100,)]),
            ("SELECT max(length(prompt)) FROM events", [(len(last),)]),
        ),
    )


def transcript_over_limit(d: Path) -> Expect:
    """A run with more messages than ``Limits.messages``: that run skipped, the next one read."""
    n = DEFAULT.messages + 1
    big = {"messages": [{"role": "user", "content": "x"}] * n, "metadata": {"id": "big"}}
    small = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        "metadata": {"id": "small"},
    }
    (d / "runs.jsonl").write_bytes(line(big) + line(small))
    return Expect(
        skips=(("runs.jsonl", 1, f"limit messages={DEFAULT.messages}"),),
        loaded={"runs.jsonl": frozenset({2})},
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
        skips=(("deep.jsonl", 1, "nested too deep"), ("deep.jsonl", 3, "nested too deep")),
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


def xml_illegal(d: Path) -> Expect:
    """U+FFFE/U+FFFF and C0 controls in a trace id and tool call that is a violation."""
    t = "t\ufffe\uffff\x01\x0b-1"
    span = tool_span(t, sid(1), "bash", {"command": "rm -rf /"})
    (d / "noncharacters.jsonl").write_bytes(line(request(span)))
    return Expect(loaded={"noncharacters.jsonl": frozenset({1})})


def markup(d: Path) -> Expect:
    """HTML, ANSI escapes and rich markup in a file name, a trace id and a skip reason."""
    t = f"{MARK}{ANSI}{RICH}"
    span = tool_span(t, sid(1), "bash", {"command": "rm -rf /"})
    evil = f"evil{MARK}{ANSI}[bold red]x.jsonl"  # no "/" in a file name
    (d / evil).write_bytes(line(request(span)))
    (d / "native_evil.jsonl").write_bytes(
        line({"type": f"{MARK}{ANSI}{RICH}", "tool": "x"})
        + line({"type": "tool_call", "tool": "read", "ts": 1.7e9})
    )
    return Expect(
        skips=(("native_evil.jsonl", 1, "unknown event type"),),
        loaded={evil: frozenset({1}), "native_evil.jsonl": frozenset({2})},
        markup=True,
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


CASES: tuple[Case, ...] = (
    Case("lone_surrogate", lone_surrogate),
    Case("int64_overflow", int64_overflow),
    Case("session_ts_overflow", session_ts_overflow),
    Case("native_tokens_overflow", native_tokens_overflow),
    Case("big_transcript", big_transcript),
    Case("transcript_over_limit", transcript_over_limit),
    Case("gzip_bomb", gzip_bomb),
    Case("zstd_bomb", zstd_bomb),
    Case("giant_line", giant_line),
    Case("deep_nesting", deep_nesting),
    Case("irregular_files", irregular_files),
    Case("nul_prefix", nul_prefix),
    Case("metrics_protobuf", metrics_protobuf, xfail=ROUTING),
    Case("logs_first_collector", logs_first_collector, xfail=ROUTING),
    Case("mixed_signals", mixed_signals, xfail=ROUTING),
    Case("xml_illegal", xml_illegal),
    Case("markup", markup),
    Case("truncated_protobuf", truncated_protobuf),
    Case("broken_json_lines", broken_json_lines),
    Case("binary_and_empty", binary_and_empty),
    Case("huge_attribute", huge_attribute),
    Case("invalid_utf8", invalid_utf8),
    Case("corrupt_gzip", corrupt_gzip),
    Case("odd_attribute_types", odd_attribute_types),
    Case("many_attributes", many_attributes),
    Case("oversize_proto_record", oversize_proto_record),
    Case("record_bomb", record_bomb),
)


def build(case: Case, d: Path) -> Expect:
    """Write ``case`` and the good file into ``d``; the good file's record is always expected."""
    d.mkdir(parents=True, exist_ok=True)
    _good(d)
    exp = case.build(d)
    return Expect(
        skips=exp.skips,
        loaded={GOOD: frozenset({1}), **exp.loaded},
        either=exp.either,
        sql=exp.sql,
        no_spans=exp.no_spans,
        markup=exp.markup,
    )
