"""Ingest's pure per-chunk work, as functions ``Workers`` can run in other processes.

- ``record_chunks`` groups an OTLP file's raw records (JSON lines, protobuf
  bodies) into ``RecordChunk``s of about ``CHUNK_BYTES``; ``decode`` turns one
  into Arrow batches of ``spans`` and ``span_facts`` rows plus skip reasons.
  Parsing and decompression happen in ``decode``, so they run in the workers.
- ``trace_chunks`` cuts the stream of ``span_facts`` batches (sorted by trace)
  at trace boundaries; ``events`` computes those traces' events and decisions.

A record's spans are all built before any is kept (all or nothing): a record
that fails anywhere, or holds more spans or span attributes than ``Limits``
allow, is listed in ``skipped`` and adds no row.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.ingest import otlp_json, otlp_logs, otlp_proto, otlp_structs
from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.conventions import span_facts
from sponsio_audit.ingest.layers import BadRecord, unwrap_record
from sponsio_audit.ingest.limits import DEFAULT, LimitExceeded, Limits
from sponsio_audit.ingest.proto_signal import proto_signal
from sponsio_audit.ingest.sniff import json_signal, parse_line, proto_records, raw_lines
from sponsio_audit.ingest.tables import LOGS_SCHEMA, rows_batch
from sponsio_audit.ingest.trace_tables import Traced, from_table
from sponsio_audit.ingest.values import dumps_attrs
from sponsio_audit.trace_batches import whole_traces

CHUNK_BYTES = 4 << 20
"""Raw bytes of records handed to one ``decode`` call (at least one record)."""

TRACE_KEY = "gkey"
"""Column of the staged span rows that says which trace (or conversation) a span is in."""

EVENTS_ROWS = 20_000
"""``span_facts`` rows per ``events`` call (whole traces, so possibly more)."""


def acyclic(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run with the cyclic garbage collector paused (its previous state restored).

    A chunk's work allocates millions of small acyclic objects (parsed JSON, attribute
    dicts, row tuples), each freed by its reference count; the collector's passes over
    them found nothing and cost 10 µs per OTLP/JSON span of the 33 µs ``decode`` took
    (4 of 25 for protobuf), measured on ``bench/ingest.py``'s 200k-span files.
    """

    @functools.wraps(fn)
    def paused(*args: Any, **kw: Any) -> Any:
        if not gc.isenabled():
            return fn(*args, **kw)
        gc.disable()
        try:
            return fn(*args, **kw)
        finally:
            gc.enable()

    return paused


@dataclass(frozen=True)
class RecordChunk:
    """Consecutive raw records of one OTLP file (``fmt``: otlp_json or otlp_proto)."""

    fmt: str
    file_id: int
    run: int
    records: list[tuple[int, bytes | BadRecord]]
    limits: Limits = DEFAULT
    raw_json: bool = True
    """Write ``spans.attributes``/``resource`` (read only by a user's SQL on a file store);
    False leaves them NULL and skips building their JSON."""
    spans: bool = True
    """Make the chunk's ``spans`` rows; False: none (a store nobody can query, whose spans
    are only counted, counts ``span_facts``: ``Store.spans``)."""


@dataclass(frozen=True)
class Decoded:
    """What ``decode`` made of a chunk; ``facts.pos`` counts from 0 within the chunk."""

    records: int
    spans: pa.RecordBatch
    facts: pa.RecordBatch
    skipped: list[tuple[int, str]]
    logs: pa.RecordBatch | None = None
    columns: Columns | None = None
    """The chunk's Python column lists, for pass 1 in the process that decoded it
    (``inchunk`` builds the chunk's events from them, then drops them: kept alive they cost
    1-2 µs per span); a ``Decoded`` sent to another process leaves them out (``__getstate__``)."""

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without ``columns``: a worker hands back only Arrow batches (sending the
        lists too cost the main process 1.5 µs per span, ``bench/ingest.py --jobs 2``)."""
        return {**self.__dict__, "columns": None}


def record_chunks(
    fmt: str,
    layout: str,
    open_: Callable[[], IO[bytes]],
    file_id: int,
    run: int,
    limits: Limits = DEFAULT,
    raw_json: bool = True,
    first: int = 1,
    spans: bool = True,
) -> Iterator[RecordChunk]:
    """The file's records, raw, in chunks of about ``CHUNK_BYTES`` (``RecordChunk.raw_json``,
    ``spans``); ``first`` numbers the stream's first line (a byte range of a JSON-lines file).

    When reading the stream fails, the records read so far are yielded as a last
    chunk before the error is raised.
    """
    raw = (
        proto_records(open_, layout, unwrap=False, limits=limits)
        if fmt == "otlp_proto"
        else raw_lines(open_, limits, first=first)
    )
    chunk: list[tuple[int, bytes | BadRecord]] = []
    size = 0
    try:
        for no, rec in raw:
            chunk.append((no, rec))
            size += len(rec) if isinstance(rec, bytes) else 0
            if size >= CHUNK_BYTES:
                yield RecordChunk(fmt, file_id, run, chunk, limits, raw_json, spans)
                chunk, size = [], 0
    except Exception:  # the stream broke: the records read before it are kept
        if chunk:
            yield RecordChunk(fmt, file_id, run, chunk, limits, raw_json, spans)
        raise
    if chunk:
        yield RecordChunk(fmt, file_id, run, chunk, limits, raw_json, spans)


_BOM = b"\xef\xbb\xbf"

Signal = list[otlp_logs.LogRow]
"""What one OTLP record holds besides the spans it appended to the chunk's ``Columns``:
its GenAI log records (each record of a file may be another signal)."""


def _json_record(doc: Any, cols: Columns) -> Signal:
    """One parsed OTLP/JSON record, routed by its own first key (traces, logs, metrics)."""
    signal = json_signal(doc)
    if signal == "logs":
        return otlp_logs.json_request_logs(doc)
    if signal == "metrics":
        raise BadRecord("OTLP metrics, not traces")
    otlp_json.request_spans(doc, cols)
    return []


def _record(fmt: str, no: int, rec: bytes | BadRecord, limits: Limits, cols: Columns) -> Signal:
    """One raw record, routed by its own content: each record of a file may be another signal."""
    if isinstance(rec, BadRecord):
        raise rec
    if fmt == "otlp_proto":
        data = unwrap_record(rec, limits)
        signal = proto_signal(data)
        if signal == "logs":
            return otlp_logs.proto_request_logs(data)
        if signal == "metrics":
            raise BadRecord("OTLP metrics, not traces")
        otlp_proto.request_spans(data, cols)
        return []
    if no != 1 or not rec.startswith(_BOM):  # a BOM (line 1 only) needs the general path
        mark = len(cols)
        if otlp_structs.spans(rec, cols):
            return []
        cols.drop(mark)  # what the fast path appended before it declined
    doc = parse_line(no, rec)
    if isinstance(doc, BadRecord):
        raise doc
    return _json_record(doc, cols)


@acyclic
def decode(chunk: RecordChunk) -> Decoded:
    """Spans, convention facts and GenAI log records of every record of ``chunk``."""
    return _decoded(
        chunk.file_id,
        chunk.run,
        chunk.records,
        lambda no, rec, cols: _record(chunk.fmt, no, rec, chunk.limits, cols),
        chunk.limits,
        chunk.raw_json,
        chunk.spans,
    )


@acyclic
def decode_document(
    file_id: int,
    run: int,
    no: int,
    doc: Any,
    limits: Limits = DEFAULT,
    raw_json: bool = True,
    spans: bool = True,
) -> Decoded:
    """``decode`` for one already parsed OTLP/JSON document (a pretty-printed file), without
    its Python column lists (no caller reads them; Spark keeps a unit's ``Decoded``)."""
    d = _decoded(
        file_id,
        run,
        [(no, doc)],
        lambda no, d, cols: _json_record(d, cols),
        limits,
        raw_json,
        spans,
    )
    return replace(d, columns=None)


def _bounded(attrs: list[dict[str, Any]], limits: Limits) -> None:
    """``LimitExceeded`` when one record (its spans' attribute dicts) has too many spans
    or a span too many attributes."""
    if len(attrs) > limits.spans_per_record:
        raise LimitExceeded(
            "spans_per_record", limits.spans_per_record, f"request of {len(attrs)} spans"
        )
    most = limits.attributes
    if max(map(len, attrs)) > most:  # one pass in C; the first span over it is named
        n = next(len(a) for a in attrs if len(a) > most)
        raise LimitExceeded("attributes", most, f"span with {n} attributes")


def _decoded(
    file_id: int,
    run: int,
    records: list[tuple[int, Any]],
    signal_of: Callable[[int, Any, Columns], Signal],
    limits: Limits,
    raw_json: bool = True,
    spans: bool = True,
) -> Decoded:
    """Each record's spans appended to one ``Columns`` by its decoder (``signal_of``), then
    checked against ``limits`` and given their facts and raw JSON, or all cut off."""
    cols = Columns(file_id, run, raw_json, spans)
    c = cols.cols
    names, recs, attrs_json = c["name"], c["record"], c["attributes"]
    facts, attrs, event_attrs = cols.facts, cols.attrs, cols.event_attrs
    log_rows: list[tuple] = []
    skipped: list[tuple[int, str]] = []
    for no, rec in records:
        mark = len(facts)
        try:
            logs = signal_of(no, rec, cols)
            if attrs:
                _bounded(attrs, limits)
                n = len(attrs)
                read = attrs
                if event_attrs:  # what the conventions read: event attributes under the span's
                    read = [event_attrs.get(i, a) for i, a in enumerate(attrs)]
                facts.extend(map(span_facts, names[mark:], read))
                attrs_json.extend(map(dumps_attrs, attrs) if raw_json else [None] * n)
                recs.extend([no] * n)
                attrs.clear()
                event_attrs.clear()
        except (BadRecord, LimitExceeded) as e:
            cols.drop(mark)
            skipped.append((no, str(e)))
            continue
        except Exception as e:  # safety net: untrusted input never crashes ingest
            cols.drop(mark)
            skipped.append((no, f"unreadable record: {type(e).__name__}: {e}"[:300]))
            continue
        for k, (tid, sid, name, t, body, la) in enumerate(logs):
            log_rows.append((tid, sid, name, t, body, la, file_id, no, k, run))
    span_batch, fact_batch = cols.batches()
    return Decoded(
        len(records),
        span_batch,
        fact_batch,
        skipped,
        rows_batch(log_rows, LOGS_SCHEMA) if log_rows else None,
        cols,
    )


def shift_pos(facts: pa.RecordBatch | pa.Table, offset: int) -> pa.RecordBatch | pa.Table:
    """``facts`` with ``offset`` added to its ``pos`` column (chunk → file positions)."""
    if not offset or not facts.num_rows:
        return facts
    i = facts.schema.get_field_index("pos")
    return facts.set_column(i, "pos", pc.add(facts.column(i), pa.scalar(offset, pa.int64())))


def trace_chunks(
    batches: Iterator[pa.RecordBatch], rows: int | None = None, key: str = TRACE_KEY
) -> Iterator[pa.Table]:
    """Batches grouped by the trace key (column ``key``), regrouped into tables of about
    ``rows`` rows (``EVENTS_ROWS`` by default) that hold whole traces, without copying."""
    return whole_traces(batches, key=key, rows=EVENTS_ROWS if rows is None else rows)


@acyclic
def events(table: pa.Table, shared: bool = True) -> Traced:
    """Events and decisions of the whole traces in ``table`` (columns ``TRACE_KEY`` and
    ``ROW_FIELDS``, found by name; rows grouped by the key, in file position order);
    ``shared``: see ``trace_tables.from_table``."""
    return from_table(table, TRACE_KEY, shared)
