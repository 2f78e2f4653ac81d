"""The executors' side of a Spark ingest: each unit decoded with the project's own code.

``decode_units`` checks that a unit's bytes are those the driver hashed (``_checked``:
a file changed since the plan is listed, never read), then runs ``chunks.decode`` on
its OTLP records (a byte range's lines, numbered from the range's first line, or a
whole file) and
``direct.load`` on the formats that are events already, against an
in-memory stand-in of the part of ``pipeline._Run`` it writes to; GenAI log
records become ``span_logs`` rows, as in the store.
``events_of`` takes the staged rows of whole traces (spans and log records
in one shuffle, sorted by key and file position), fills each span's
unrecorded facts from its log records with ``attach``'s own SQL on an
in-memory DuckDB (``attached``), turns them into events and ``traces``
counts (``chunks.events``) and, with a config, evaluates them in the same
task. ``judge_empty`` judges the traces with no events, as ``api.audit``
does. Tables travel between stages as Arrow IPC blobs tagged by kind.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sponsio_audit import regexes
from sponsio_audit.evaluation import evaluations
from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ingest import attach, chunks, direct, inchunk
from sponsio_audit.ingest.conventions import FACT_FIELDS
from sponsio_audit.ingest.files import event_records, otlp_decoder, prefix, unchanged
from sponsio_audit.ingest.layers import decompressed
from sponsio_audit.ingest.limits import DEFAULT, Limits, stream_failure
from sponsio_audit.ingest.line_ranges import Ident, open_range
from sponsio_audit.ingest.tables import (
    DECISIONS_SCHEMA,
    FACTS_SCHEMA,
    LOGS_SCHEMA,
    SKIPPED_SCHEMA,
    SPANS_SCHEMA,
    TRACES_SCHEMA,
    rows_batch,
)
from sponsio_audit.ingest.trace_events import ROW_FIELDS
from sponsio_audit.spark.arrow import pack, spark_schema, unpack
from sponsio_audit.spark.auditing import empty_tables, time_limit
from sponsio_audit.spark.plan import RUN, Unit
from sponsio_audit.verdicts import VERDICT_SCHEMA, VIOLATION_SCHEMA

COUNTS_SCHEMA = pa.schema(
    [
        ("file_id", pa.int64()),
        ("records", pa.int64()),
        ("skipped", pa.int64()),
        ("fmt", pa.string()),
    ]
)
SCHEMAS = {
    "spans": SPANS_SCHEMA,
    "facts": FACTS_SCHEMA,
    "skipped": SKIPPED_SCHEMA,
    "events": EVENT_SCHEMA,
    "decisions": DECISIONS_SCHEMA,
    "counts": COUNTS_SCHEMA,
    "span_logs": LOGS_SCHEMA,
    "traces": TRACES_SCHEMA,
    "verdicts": VERDICT_SCHEMA,
    "violations": VIOLATION_SCHEMA,
}
"""The tables that travel as IPC blobs between the stages, by kind."""

BLOBS = "kind string, blob binary"

SIGNAL = "_signal"
"""Column of the staged rows saying what a row is: ``span`` (``span_facts``) or ``log``
(``span_logs``); both kinds of a trace travel through the one shuffle by trace key."""


@dataclass
class _Rows:
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    def add(self, row: tuple[Any, ...]) -> None:
        self.rows.append(row)


@dataclass
class _Collector:
    """What ``direct.load`` writes to (the part of ``pipeline._Run`` it uses), kept in memory."""

    run: int = RUN
    direct_traces: int = 0
    skipped: _Rows = field(default_factory=_Rows)
    events: _Rows = field(default_factory=_Rows)
    decisions: _Rows = field(default_factory=_Rows)
    traces: _Rows = field(default_factory=_Rows)
    decoded: list[chunks.Decoded] = field(default_factory=list)
    limits: Limits = DEFAULT

    def take(self, d: chunks.Decoded, file_id: int) -> int:
        """Keep a decoded chunk (spans, facts, log records); its skipped records, counted."""
        for no, reason in d.skipped:
            self.skipped.add((file_id, no, reason))
        self.decoded.append(d)
        return len(d.skipped)


def _decode(unit: Unit, c: _Collector) -> tuple[int, int, str]:
    """Read one unit into ``c``; (records, skipped records, format) as ``pipeline._file``.

    Its bytes are first checked to be those the driver hashed (``_checked``)."""
    same: Ident | None = None

    def open_() -> IO[bytes]:  # as far as the driver hashed it (a live log grows meanwhile)
        return decompressed(prefix(unit.path, unit.size, same))[0]

    n = bad = 0
    fmt = unit.fmt
    first = 1  # the number of the unit's first record: a range's first line
    try:
        same = _checked(unit)
    except OSError as e:  # changed, cut shorter, gone: nothing of it read, its first record
        c.skipped.add((unit.file_id, unit.first, stream_failure(e)))  # stands for it
        return 1, 1, fmt
    try:
        if fmt in ("session_log", "native", "transcript") or unit.layout == "document":
            recs = event_records(fmt, unit.layout, open_, c.limits)
            return direct.load(c, unit.file_id, unit.sha, fmt, unit.layout, recs)
        opener: Callable[[], IO[bytes]] = open_
        if unit.end >= 0:  # a byte range of a JSON-lines file, read as ingest's workers do
            opener = partial(open_range, unit.path, unit.start, unit.end - unit.start, same)
            first = unit.first
        todo = chunks.record_chunks(
            otlp_decoder(fmt), unit.layout, opener, unit.file_id, RUN, c.limits, first=first
        )
        for chunk in todo:
            d = inchunk.decode_chunk(chunk)  # without its Python column lists: kept per unit
            n += d.records
            bad += c.take(d, unit.file_id)
    except Exception as e:  # the stream broke: the records read before it are kept, and the
        c.skipped.add((unit.file_id, first + n, stream_failure(e)))  # next one stands for the rest
        n, bad = n + 1, bad + 1
    return n, bad, fmt


def _checked(unit: Unit) -> Ident:
    """The file of ``unit``, its bytes checked to be those the driver hashed (a whole
    file's sha256, a range's CRC-32: ``files.unchanged``), so that a file replaced,
    rewritten or cut shorter after the plan (a rotated log, another file copied over it)
    is listed, never audited under the old one's sha256; every later open of the task
    checks it reads that same file (``Changed``, ``Shrank``, ``Replaced``: all ``OSError``)."""
    whole = unit.end < 0
    start, end = (0, unit.size) if whole else (unit.start, unit.end)
    return unchanged(unit.path, start, end, unit.sha if whole else None, unit.crc)


def _blob(kind: str, table: pa.Table | pa.RecordBatch) -> tuple[str, bytes]:
    return kind, pack(table)


def _blobs_batch(blobs: list[tuple[str, bytes]]) -> pa.RecordBatch:
    return pa.record_batch(
        [
            pa.array([k for k, _ in blobs], pa.string()),
            pa.array([b for _, b in blobs], pa.binary()),
        ],
        names=["kind", "blob"],
    )


def decode_units(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow``: units (JSON) → IPC blobs of spans, facts, span_logs, skipped, events,
    decisions and traces (of the formats that are events already)."""
    for b in batches:
        for text in b.column("unit").to_pylist():
            unit = Unit(**json.loads(text))
            c = _Collector()
            n, bad, fmt = _decode(unit, c)
            out = [_blob("counts", rows_batch([(unit.file_id, n, bad, fmt)], COUNTS_SCHEMA))]
            for d in c.decoded:
                if d.spans.num_rows:
                    out += [_blob("spans", d.spans), _blob("facts", d.facts)]
                if d.logs is not None and d.logs.num_rows:
                    out.append(_blob("span_logs", d.logs))
            for kind, rows in (
                ("skipped", c.skipped.rows),
                ("events", c.events.rows),
                ("decisions", c.decisions.rows),
                ("traces", c.traces.rows),
            ):
                if rows:
                    out.append(_blob(kind, rows_batch(rows, SCHEMAS[kind])))
            for blob in out:  # a batch a blob: the JVM never holds a unit's tables at once
                yield _blobs_batch([blob])


_BASE = ROW_FIELDS[: ROW_FIELDS.index(FACT_FIELDS[0])]
"""The staged span columns before its facts (what log records never fill)."""


def attached(table: pa.Table) -> pa.Table:
    """The span rows of staged rows of whole traces, each span's unrecorded facts filled
    from its log records by ``attach``'s own SQL (``log_facts_table``, ``fill_sql``), as
    ``ingest.pipeline`` fills them; a log record whose span never came is left out."""
    is_log = pc.fill_null(pc.equal(table.column(SIGNAL), "log"), False)
    spans = table.filter(pc.invert(is_log))
    if not pc.any(is_log).as_py():
        return spans
    con = duckdb.connect(config={"threads": 1})
    try:
        con.register("_logs_in", table.filter(is_log).select(LOGS_SCHEMA.names))
        con.execute("CREATE TABLE span_logs AS SELECT * FROM _logs_in")
        con.register(attach.VIEW, attach.log_facts_table(con, "SELECT trace_id FROM span_logs", {}))
        con.register("_spans_in", spans)
        base = ", ".join(f"f.{c}" for c in _BASE)
        key = chunks.TRACE_KEY
        return con.sql(
            f"SELECT f.{key}, {base}, {attach.fill_sql('f', 'lf')} FROM _spans_in f "
            f"LEFT JOIN {attach.VIEW} lf ON lf.trace_id = f.trace_id AND lf.span_id = f.span_id "
            f"ORDER BY f.{key}, f.file_id, f.record, f.pos"
        ).to_arrow_table()
    finally:
        con.close()


def events_of(config: Any, rows: int) -> Any:
    """``mapInArrow``: staged spans and log records sorted by key → blobs of events,
    decisions, traces (and, with a config, verdicts and violations of those events, in the
    same task)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in chunks.trace_chunks(batches, rows):
            t = chunks.events(attached(table))
            out = [_blob("events", t.events), _blob("decisions", t.decisions)]
            if t.counts is not None and t.counts.num_rows:
                out.append(_blob("traces", t.counts))
            if config is not None and t.events.num_rows:
                out += _results(pa.Table.from_batches([t.events]), config)
            yield _blobs_batch(out)

    return run


def _results(events: pa.Table, config: Any) -> list[tuple[str, bytes]]:
    """Blobs of the verdicts and violations of ``config`` over some whole traces' events."""
    out = []
    with regexes.time_limit(time_limit(config)):
        for tables in evaluations(events, config, threads=1):  # a Spark task per core
            out += [_blob("verdicts", tables.verdicts), _blob("violations", tables.violations)]
    return out


def evaluate_direct(config: Any) -> Any:
    """``mapInArrow``: blobs of direct events (whole traces of one file each) → result blobs."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            for blob in b.column("blob").to_pylist():
                events = pa.Table.from_batches(list(unpack(iter([blob]), EVENT_SCHEMA)))
                out = _results(events, config)
                if out:
                    yield _blobs_batch(out)

    return run


def judge_empty(config: Any) -> Any:
    """``mapInArrow``: blobs of ``traces`` rows → result blobs of the traces with no events
    (``auditing.empty_tables``)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            for t in unpack(iter(b.column("blob").to_pylist()), TRACES_SCHEMA):
                ids = t.column("trace_id").to_pylist()
                counts = t.column("events").to_pylist()
                empty = sorted({i for i, n in zip(ids, counts, strict=True) if n == 0})
                if empty:
                    tables = empty_tables(empty, config)
                    yield _blobs_batch(
                        [_blob("verdicts", tables.verdicts), _blob("violations", tables.violations)]
                    )

    return run


def _unpacker(kind: str) -> Any:
    schema = SCHEMAS[kind]

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            yield from unpack(iter(b.column("blob").to_pylist()), schema)

    return run


def table_of(blobs: DataFrame, kind: str) -> DataFrame:
    """The rows of the ``kind`` blobs of a blob DataFrame as a DataFrame of that table."""
    return (
        blobs.filter(F.col("kind") == kind)
        .select("blob")
        .mapInArrow(_unpacker(kind), spark_schema(SCHEMAS[kind]))
    )
