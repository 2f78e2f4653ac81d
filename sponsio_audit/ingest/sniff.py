"""Recognise a file by its bytes (never its name) and split it into numbered records.

Compression is peeled off first (``layers``). Then: first byte ``0x0A`` is a
raw OTLP protobuf body (one record); a 4-byte big-endian length followed by a
protobuf/zstd/gzip record is the Collector's length-prefixed ``format: proto``
file (each record may itself be compressed); text starting with ``{`` or ``[``
is JSON, classified by the keys of the first parsable line (JSON Lines) or,
when no line parses, as one pretty-printed document. Record numbers are
1-based: line numbers for JSON Lines, record positions for length-prefixed
files, 1 for a whole document.

Every read is bounded (``limits.Limits``): decompressed bytes per file and
their ratio to the compressed bytes (``layers``), bytes per line, document
and protobuf record. A line or record over its bound is a ``BadRecord`` naming
the limit and the reading goes on after it; a stream over its bound raises
``LimitExceeded`` (the rest of the file is skipped). NUL padding before the
first record (preallocated or crash-recovered logs) is ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Any

from sponsio_audit.ingest.layers import BadRecord, skippable, unwrap_record
from sponsio_audit.ingest.limits import DEFAULT, LimitExceeded, Limits
from sponsio_audit.ingest.values import parse

SCAN_LINES = 20
PAD = b"\xef\xbb\xbf \t\r\n\x00"
"""Bytes skipped before the first record: BOM, whitespace, NUL padding."""
_STEP = 1 << 20

Opener = Callable[[], IO[bytes]]

NOT_TRACES = {
    "empty": "empty file",
    "unknown": "unrecognised format (not OTLP, Sponsio log or transcript)",
    "duckdb": "a DuckDB database, not traces (a stored audit? read it with --db)",
    "parquet": "a Parquet file, not traces (a `scan --parquet` export? read it with report)",
}
"""Formats whose whole file is one skipped record, with its reason (ingest and Spark)."""

_MAGIC = ((8, b"DUCK", "duckdb"), (0, b"PAR1", "parquet"))
"""(offset, bytes, format) of the files this tool writes, which a folder of traces may hold."""


def _typed(obj: dict[str, Any]) -> bool:
    """Whether a JSON object names an event type (ours ``type``, Sponsio's ``event_type``)."""
    return "type" in obj or "event_type" in obj


def classify(obj: Any) -> str | None:
    """The format a parsed JSON value belongs to, or None when it is none of ours."""
    if isinstance(obj, list):
        if all(isinstance(x, dict) and "role" in x for x in obj[:50]):
            return "transcript"
        if obj and all(isinstance(x, dict) and _typed(x) for x in obj[:50]):
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
    if _typed(obj) and ("ts" in obj or "agent" in obj or "tool" in obj):
        return "native"
    return None


SIGNALS = {"resourceSpans": "traces", "resourceLogs": "logs", "resourceMetrics": "metrics"}
"""OTLP/JSON top-level key → signal."""


def json_signal(obj: Any) -> str | None:
    """The OTLP signal (traces, logs, metrics) of one parsed JSON record, by its own key."""
    if isinstance(obj, dict):
        for key, signal in SIGNALS.items():
            if key in obj:
                return signal
    return None


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    """(value, end) of the varint of at most 5 bytes at ``at``; None when ``data`` ends first."""
    value = 0
    for i in range(at, min(len(data), at + 5)):
        value |= (data[i] & 0x7F) << (7 * (i - at))
        if data[i] < 0x80:
            return value, i + 1
    return None


def _raw_proto(head: bytes) -> bool:
    """Field 1 (resource_spans), a varint length, then a ResourceSpans field (all three are
    length-delimited) whose own length fits inside: blank lines (b"\n\n\n{") start like
    the first two, never with a length that fits; padding alone (b"\n\x00\n\x00", two
    empty ones) is read on as padding."""
    if head[:1] != b"\x0a" or not head.strip(PAD) or (outer := _varint(head, 1)) is None:
        return False
    length, at = outer
    if at >= len(head) or head[at] not in (0x0A, 0x12, 0x1A):
        return False
    if length == 0:  # an empty ResourceSpans, then the next one
        return head[at] == 0x0A
    inner = _varint(head, at + 1)
    return inner is not None and inner[1] - at + inner[0] <= length


def _fits(head: bytes, open_: Opener, limits: Limits) -> bool:
    """Whether the stream holds the first message its 4-byte length prefix announces, for a
    prefix of padding then ``{``/``[`` (JSON after blank lines: b"\n\n\n{" is a 168 MB
    length); read ahead only as far as a JSON document may be long."""
    lead = head[: len(head) - len(head.lstrip(PAD))]
    if head[len(lead) : len(lead) + 1] not in (b"{", b"[") or not lead.strip(b"\x00"):
        return True
    need = min(4 + int.from_bytes(head[:4], "big"), limits.record_bytes + 1)
    got = 0
    with open_() as f:
        while got < need and (block := f.read(min(need - got, 1 << 20))):
            got += len(block)
    return got >= need


def _delimited_proto(head: bytes) -> bool:
    """A 4-byte big-endian length, then a message, gzip or zstd frame (Collector ``proto``;
    a zstd record may start with a skippable frame)."""
    if len(head) < 5 or head[0] >= 0x40:
        return False
    return head[4] in (0x0A, 0x28, 0x1F) or skippable(head[4:8])


def sniff(open_: Opener, limits: Limits = DEFAULT) -> tuple[str, str]:
    """(format, layout) of the stream: layout is lines | document | raw | delimited | none.

    Formats: otlp_json, otlp_proto, session_log, native, transcript, otlp_logs,
    otlp_metrics, and the ``NOT_TRACES`` (empty, unknown, duckdb, parquet).
    """
    with open_() as f:
        head = f.read(16)
        if not head:
            return "empty", "none"
        if _raw_proto(head):
            return "otlp_proto", "raw"
        if _delimited_proto(head) and head[:4].strip(PAD) and _fits(head, open_, limits):
            # before padding is stripped: a length prefix may hold NUL, newline or `[` bytes
            return "otlp_proto", "delimited"
        text = head.lstrip(PAD)
        while not text:
            head = f.read(1 << 16)
            if not head:
                return "empty", "none"
            text = head.lstrip(PAD)
        if text[:1] not in b"{[":
            if _delimited_proto(head):
                return "otlp_proto", "delimited"
            magic = [fmt for at, m, fmt in _MAGIC if head[at : at + len(m)] == m]
            return (magic[0] if magic else "unknown"), "none"
    for _, (_, line) in zip(range(SCAN_LINES), raw_lines(open_, limits), strict=False):
        if isinstance(line, BadRecord):
            break  # a line too large to classify: the lines before it decide
        try:
            obj = parse(line.strip().decode("utf-8-sig"))
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, list):
            break
        kind = classify(obj)
        if kind is not None:
            return kind, "lines"
    return "json", "document"


def _too_big(limits: Limits, what: str) -> BadRecord:
    return BadRecord(str(LimitExceeded("record_bytes", limits.record_bytes, f"{what} too large")))


def read_document(open_: Opener, limits: Limits = DEFAULT) -> Any:
    """The whole stream parsed as one JSON document (BadRecord when it is not JSON)."""
    with open_() as f:
        data = f.read(limits.record_bytes + 1)
    if len(data) > limits.record_bytes:
        raise _too_big(limits, "JSON document")
    doc = parse_line(1, data.lstrip(PAD))
    if isinstance(doc, BadRecord):
        raise doc
    return doc


def raw_lines(
    open_: Opener, limits: Limits = DEFAULT, first: int = 1
) -> Iterator[tuple[int, bytes | BadRecord]]:
    """(line number, bytes) of every non-blank line, unparsed (parsed by ``parse_line``);
    the stream's first line is number ``first`` (a range of a file: ``line_ranges``).

    A line over ``limits.record_bytes`` is a ``BadRecord`` (read past, never held whole).
    """
    cap = limits.record_bytes
    with open_() as f:
        no = first - 1
        while line := f.readline(cap + 1):
            no += 1
            if len(line) > cap and not line.endswith(b"\n"):
                yield no, _too_big(limits, "line")  # first: a reader that stops reads no further
                while (rest := f.readline(_STEP)) and not rest.endswith(b"\n"):
                    pass
                continue
            if line[:1] == b"\x00":
                line = line.lstrip(b"\x00")
            if no == 1 and line[:3] == b"\xef\xbb\xbf":  # the file's BOM, alone on its line too
                line = line[3:]
            if line.strip():
                yield no, line


def parse_line(no: int, line: bytes | BadRecord) -> Any:
    """One JSON line (or, as line 1, a whole document) as a value, or a ``BadRecord``
    saying why it is not one (never raises)."""
    if isinstance(line, BadRecord):
        return line
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


def json_lines(open_: Opener, limits: Limits = DEFAULT) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value or BadRecord) of every non-blank line."""
    for no, line in raw_lines(open_, limits):
        yield no, parse_line(no, line)


def _discard(f: IO[bytes], n: int) -> int:
    """Read past ``n`` bytes of ``f`` without holding them; returns the bytes read."""
    got = 0
    while got < n and (piece := f.read(min(_STEP, n - got))):
        got += len(piece)
    return got


def proto_records(
    open_: Opener, layout: str, *, unwrap: bool = True, limits: Limits = DEFAULT
) -> Iterator[tuple[int, bytes | BadRecord]]:
    """(record number, bytes or BadRecord) of a raw or length-prefixed protobuf stream.

    ``unwrap=False`` leaves per-record compression on (for ``unwrap_record`` in a worker).
    A record over ``limits.record_bytes`` is read past and listed; the next one is read.
    """
    cap = limits.record_bytes
    with open_() as f:
        if layout == "raw":
            data = f.read(cap + 1)
            yield 1, _too_big(limits, "protobuf body") if len(data) > cap else data
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
            if n > cap:
                got = _discard(f, n)
                if got < n:
                    yield no, BadRecord(f"truncated record: expected {n} bytes, got {got}")
                    return
                yield no, _too_big(limits, f"record of {n} bytes")
                continue
            data = f.read(n)
            if len(data) < n:
                yield no, BadRecord(f"truncated record: expected {n} bytes, got {len(data)}")
                return
            if not unwrap:
                yield no, data
                continue
            try:
                yield no, unwrap_record(data, limits)
            except BadRecord as e:
                yield no, e
