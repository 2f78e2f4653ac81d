"""Recognise a file by its bytes (never its name) and split it into numbered records.

Compression (gzip ``1F 8B``, zstd ``28 B5 2F FD``) is peeled off first, possibly
nested. Then: first byte ``0x0A`` is a raw OTLP protobuf body (one record);
a 4-byte big-endian length followed by a protobuf/zstd/gzip record is the
Collector's length-prefixed ``format: proto`` file (each record may itself be
compressed); text starting with ``{`` or ``[`` is JSON, classified by the keys
of the first parsable line (JSON Lines) or, when no line parses, as one
pretty-printed document. Record numbers are 1-based: line numbers for JSON
Lines, record positions for length-prefixed files, 1 for a whole document.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable, Iterator
from typing import IO, Any

import zstandard

from sponsio_audit.ingest.values import parse

GZIP = b"\x1f\x8b"
ZSTD = b"\x28\xb5\x2f\xfd"
SCAN_LINES = 20
MAX_RECORD = 1 << 30

Opener = Callable[[], IO[bytes]]


class BadRecord(Exception):
    """A record that cannot be read; the message is the one-line skip reason."""


def decompressed(raw: IO[bytes]) -> tuple[IO[bytes], list[str]]:
    """``raw`` with gzip/zstd layers peeled off (by magic bytes), and the layers found."""
    layers: list[str] = []
    stream: IO[bytes] = raw
    for _ in range(4):
        buf = stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream)  # type: ignore[type-var]
        head = buf.peek(4)[:4]
        if head[:2] == GZIP:
            layers.append("gzip")
            stream = gzip.GzipFile(fileobj=buf)  # type: ignore[assignment]
        elif head == ZSTD:
            layers.append("zstd")
            stream = zstandard.ZstdDecompressor().stream_reader(buf, read_across_frames=True)
        else:
            return buf, layers
    return io.BufferedReader(stream), layers  # type: ignore[type-var]


def unwrap_record(data: bytes) -> bytes:
    """One record's bytes with per-record gzip/zstd compression removed."""
    for _ in range(4):
        if data[:4] == ZSTD:
            try:
                with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as r:
                    data = r.read(MAX_RECORD)
            except zstandard.ZstdError as e:
                raise BadRecord(f"corrupt zstd record: {e}") from None
        elif data[:2] == GZIP:
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as e:
                raise BadRecord(f"corrupt gzip record: {e}") from None
        else:
            return data
    return data


def classify(obj: Any) -> str | None:
    """The format a parsed JSON value belongs to, or None when it is none of ours."""
    if isinstance(obj, list):
        if all(isinstance(x, dict) and "role" in x for x in obj[:50]):
            return "transcript"
        if obj and all(isinstance(x, dict) and "type" in x for x in obj[:50]):
            return "native"
        return None
    if not isinstance(obj, dict):
        return None
    if "resourceSpans" in obj:
        return "otlp_json"
    if "resourceLogs" in obj:
        return "otlp_logs"
    if "resourceMetrics" in obj:
        return "otlp_metrics"
    if "agent_id" in obj and "action" in obj:
        return "session_log"
    if "messages" in obj:
        return "transcript"
    if "events" in obj and isinstance(obj["events"], list):
        return "native"
    if "type" in obj and ("ts" in obj or "agent" in obj or "tool" in obj):
        return "native"
    return None


def _raw_proto(head: bytes) -> bool:
    """Field 1 (resource_spans), a varint length, then a ResourceSpans field tag."""
    if head[:1] != b"\x0a":
        return False
    for i in range(1, min(len(head), 6)):
        if head[i] < 0x80:
            return i + 1 < len(head) and head[i + 1] in (0x0A, 0x12, 0x1A)
    return False


def sniff(open_: Opener) -> tuple[str, str]:
    """(format, layout) of the stream: layout is lines | document | raw | delimited | none.

    Formats: otlp_json, otlp_proto, session_log, native, transcript, otlp_logs,
    otlp_metrics, empty, unknown.
    """
    with open_() as f:
        head = f.read(16)
        if not head:
            return "empty", "none"
        if _raw_proto(head):
            return "otlp_proto", "raw"
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if not text:
            head = f.read(1 << 16)
            text = head.lstrip(b" \t\r\n")
            if not text:
                return "empty", "none"
        if text[:1] not in b"{[":
            if len(head) >= 5 and head[4] in (0x0A, 0x28, 0x1F) and head[0] < 0x40:
                return "otlp_proto", "delimited"
            return "unknown", "none"
    with open_() as f:
        for _, line in zip(range(SCAN_LINES), f, strict=False):
            s = line.strip()
            if not s:
                continue
            try:
                obj = parse(s.decode("utf-8-sig"))
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, list):
                break
            kind = classify(obj)
            if kind is not None:
                return kind, "lines"
    return "json", "document"


def read_document(open_: Opener) -> Any:
    """The whole stream parsed as one JSON document (BadRecord when it is not JSON)."""
    with open_() as f:
        data = f.read(MAX_RECORD)
    doc = parse_line(1, data)
    if isinstance(doc, BadRecord):
        raise doc
    return doc


def raw_lines(open_: Opener) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of every non-blank line, unparsed (parsed by ``parse_line``)."""
    with open_() as f:
        for no, line in enumerate(f, 1):
            if line.strip():
                yield no, line


def parse_line(no: int, line: bytes) -> Any:
    """One JSON line (or, as line 1, a whole document) as a value, or a ``BadRecord``
    saying why it is not one (never raises)."""
    try:
        text = line.decode("utf-8-sig" if no == 1 else "utf-8")
    except UnicodeDecodeError as e:
        return BadRecord(f"invalid UTF-8 at byte {e.start}")
    try:
        return parse(text)
    except RecursionError:
        return BadRecord("JSON nested too deep")
    except ValueError as e:
        return BadRecord(f"invalid JSON: {e}")


def json_lines(open_: Opener) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value or BadRecord) of every non-blank line."""
    for no, line in raw_lines(open_):
        yield no, parse_line(no, line)


def proto_records(
    open_: Opener, layout: str, *, unwrap: bool = True
) -> Iterator[tuple[int, bytes | BadRecord]]:
    """(record number, bytes or BadRecord) of a raw or length-prefixed protobuf stream.

    ``unwrap=False`` leaves per-record compression on (for ``unwrap_record`` in a worker).
    """
    with open_() as f:
        if layout == "raw":
            yield 1, f.read(MAX_RECORD)
            return
        no = 0
        while True:
            hdr = f.read(4)
            if not hdr:
                return
            no += 1
            if len(hdr) < 4:
                yield no, BadRecord(f"truncated length prefix ({len(hdr)} of 4 bytes)")
                return
            n = int.from_bytes(hdr, "big")
            if n > MAX_RECORD:
                yield no, BadRecord(f"record length {n} exceeds limit; rest of file unreadable")
                return
            data = f.read(n)
            if len(data) < n:
                yield no, BadRecord(f"truncated record: expected {n} bytes, got {len(data)}")
                return
            if not unwrap:
                yield no, data
                continue
            try:
                yield no, unwrap_record(data)
            except BadRecord as e:
                yield no, e
