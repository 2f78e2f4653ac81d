"""``ingest(spark, paths)``: trace files → the store's tables as DataFrames, decoded on executors.

The driver plans (``plan``): it walks the paths, hashes each file once
(duplicates by sha256 are read once, as in ``ingest.pipeline``), numbers the
files, sniffs their format and cuts uncompressed OTLP JSON Lines files into
line-aligned byte ranges of about ``RANGE_BYTES``, counting the lines before
each range so that record numbers stay the file's line numbers. Files that
are skipped whole (empty, unrecognised, logs, metrics, unreadable) are
listed by the driver.

The executors run the project's own code on each unit: ``chunks.decode``
for OTLP records, ``direct.load`` for the formats that are events already.
The spans' convention facts are shuffled once by trace (or conversation)
key, sorted by (file, record, position) and turned into events by
``chunks.events``; with a ``config``, the same task evaluates them
(``evaluations``), so ingest and evaluation share one stage. Nothing of the
conventions is written again here.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import IO, Any

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sponsio_audit.evaluation import evaluations, permissions_of
from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ingest import chunks, direct
from sponsio_audit.ingest.pipeline import _records, walk
from sponsio_audit.ingest.sniff import decompressed, sniff
from sponsio_audit.ingest.store import (
    DECISIONS_SCHEMA,
    FACTS_SCHEMA,
    FILES_SCHEMA,
    SKIPPED_SCHEMA,
    SPANS_SCHEMA,
    rows_batch,
)
from sponsio_audit.spark.arrow import pack, plain_schema, spark_schema, unpack
from sponsio_audit.verdicts import VERDICT_SCHEMA, VIOLATION_SCHEMA

RANGE_BYTES = 32 << 20
"""Bytes of an OTLP JSON Lines file read by one task (cut at the next line end)."""

RUN = 1
"""The ``span_facts.run`` of every fact (one ingest run)."""

SKIPPED_WHOLE = {
    "empty": "empty file",
    "otlp_logs": "OTLP logs, not traces",
    "otlp_metrics": "OTLP metrics, not traces",
    "unknown": "unrecognised format (not OTLP, Sponsio log or transcript)",
}
"""Formats whose file is one skipped record (the reasons of ``ingest.pipeline``)."""

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
    "verdicts": VERDICT_SCHEMA,
    "violations": VIOLATION_SCHEMA,
}
"""The tables that travel as IPC blobs between the stages, by kind."""

BLOBS = "kind string, blob binary"


@dataclass(frozen=True)
class Unit:
    """What one task reads: a whole file (``end`` -1) or a byte range of a JSON Lines file."""

    file_id: int
    path: str
    fmt: str
    layout: str
    sha: str
    start: int = 0
    end: int = -1
    first: int = 1  # record (line) number of the range's first line


@dataclass(frozen=True)
class Plan:
    """The driver's plan: units for the executors, rows of files read no further, duplicates."""

    units: list[Unit] = field(default_factory=list)
    files: list[tuple[Any, ...]] = field(default_factory=list)
    skipped: list[tuple[int, int, str]] = field(default_factory=list)
    duplicates: int = 0


def _scan(path: str, range_bytes: int) -> tuple[str, int, list[tuple[int, int]]]:
    """sha256, size and the range starts ``(byte offset, lines before it)`` of a file, in
    one read: a range starts after the first line end at or past each ``range_bytes``."""
    h = hashlib.sha256()
    starts = [(0, 0)]
    offset = lines = 0
    target = range_bytes
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
            at = 0
            while target < offset + len(block):
                i = block.find(b"\n", max(target - offset, at))
                if i < 0:
                    break
                start = offset + i + 1
                starts.append((start, lines + block.count(b"\n", 0, i + 1)))
                target, at = start + range_bytes, i + 1
            lines += block.count(b"\n")
            offset += len(block)
    if starts[-1][0] >= offset and len(starts) > 1:
        starts.pop()  # a cut at the very end: nothing after it
    return h.hexdigest(), offset, starts


def plan(paths: list[str], range_bytes: int = RANGE_BYTES) -> Plan:
    """Units, whole-file rows and duplicates of the files under ``paths`` (module doc)."""
    out = Plan()
    shas: set[str] = set()
    duplicates = 0
    file_id = 0
    for path in walk(list(paths)):
        if path == "-":
            raise ValueError("-: standard input cannot be read by Spark executors; give a file")
        try:
            sha, size, starts = _scan(path, range_bytes)
        except OSError as e:
            file_id += 1
            out.skipped.append((file_id, 0, f"cannot read file: {e.strerror or e}"))
            out.files.append((file_id, path, "unreadable", None, None, 1, 1))
            continue
        if sha in shas:
            duplicates += 1
            continue
        shas.add(sha)
        file_id += 1

        def open_(p: str = path) -> IO[bytes]:
            return decompressed(open(p, "rb"))[0]

        try:
            fmt, layout = sniff(open_)
            with open(path, "rb") as raw:
                layers = decompressed(raw)[1]
        except Exception as e:  # a stream that breaks while sniffing: its record 1
            out.skipped.append((file_id, 1, f"unreadable stream: {type(e).__name__}: {e}"[:300]))
            out.files.append((file_id, path, "unknown", size, sha, 1, 1))
            continue
        if fmt in SKIPPED_WHOLE:
            out.skipped.append((file_id, 0, SKIPPED_WHOLE[fmt]))
            out.files.append((file_id, path, fmt, size, sha, 1, 1))
        elif fmt == "otlp_json" and layout == "lines" and not layers:
            ends = [s for s, _ in starts[1:]] + [size]
            for (start, before), end in zip(starts, ends, strict=True):
                out.units.append(Unit(file_id, path, fmt, layout, sha, start, end, before + 1))
        else:
            out.units.append(Unit(file_id, path, fmt, layout, sha))
    return Plan(out.units, out.files, out.skipped, duplicates)


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
    decoded: list[chunks.Decoded] = field(default_factory=list)

    def take(self, d: chunks.Decoded, file_id: int) -> int:
        for no, reason in d.skipped:
            self.skipped.add((file_id, no, reason))
        self.decoded.append(d)
        return len(d.skipped)


def _range_chunks(unit: Unit) -> Iterator[chunks.RecordChunk]:
    """The unit's lines (blank ones skipped, numbers kept) in chunks of ``CHUNK_BYTES``."""
    with open(unit.path, "rb") as f:
        f.seek(unit.start)
        data = f.read(unit.end - unit.start)
    records: list[tuple[int, Any]] = []
    size = 0
    for no, line in enumerate(io.BytesIO(data), unit.first):
        if not line.strip():
            continue
        records.append((no, line))
        size += len(line)
        if size >= chunks.CHUNK_BYTES:
            yield chunks.RecordChunk(unit.fmt, unit.file_id, RUN, records)
            records, size = [], 0
    if records:
        yield chunks.RecordChunk(unit.fmt, unit.file_id, RUN, records)


def _decode(unit: Unit, c: _Collector) -> tuple[int, int, str]:
    """Read one unit into ``c``; (records, skipped records, format) as ``pipeline._file``."""

    def open_() -> IO[bytes]:
        return decompressed(open(unit.path, "rb"))[0]

    n = bad = 0
    fmt = unit.fmt
    try:
        if fmt in ("session_log", "native", "transcript") or unit.layout == "document":
            recs = _records(fmt, unit.layout, open_)
            return direct.load(c, unit.file_id, unit.sha, fmt, unit.layout, recs)
        todo = (
            _range_chunks(unit)
            if unit.end >= 0
            else chunks.record_chunks(fmt, unit.layout, open_, unit.file_id, RUN)
        )
        for chunk in todo:
            d = chunks.decode(chunk)
            n += d.records
            bad += c.take(d, unit.file_id)
    except Exception as e:  # the stream broke: the records read before it are kept
        n, bad = n + 1, bad + 1
        c.skipped.add((unit.file_id, n, f"unreadable stream: {type(e).__name__}: {e}"[:300]))
    return n, bad, fmt


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


def _decode_units(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow``: units (JSON) → IPC blobs of spans, facts, skipped, events, decisions."""
    for b in batches:
        for text in b.column("unit").to_pylist():
            unit = Unit(**json.loads(text))
            c = _Collector()
            n, bad, fmt = _decode(unit, c)
            out = [_blob("counts", rows_batch([(unit.file_id, n, bad, fmt)], COUNTS_SCHEMA))]
            for d in c.decoded:
                if d.spans.num_rows:
                    out += [_blob("spans", d.spans), _blob("facts", d.facts)]
            for kind, rows in (
                ("skipped", c.skipped.rows),
                ("events", c.events.rows),
                ("decisions", c.decisions.rows),
            ):
                if rows:
                    out.append(_blob(kind, rows_batch(rows, SCHEMAS[kind])))
            yield _blobs_batch(out)


def _events_of(config: Any, rows: int) -> Any:
    """``mapInArrow``: staged spans sorted by key → blobs of events, decisions (and, with a
    config, verdicts and violations of those events, in the same task)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in chunks.trace_chunks(batches, rows):
            t = chunks.events(table)
            out = [_blob("events", t.events), _blob("decisions", t.decisions)]
            if config is not None and t.events.num_rows:
                for tables in evaluations(pa.Table.from_batches([t.events]), config):
                    out += [
                        _blob("verdicts", tables.verdicts),
                        _blob("violations", tables.violations),
                    ]
            yield _blobs_batch(out)

    return run


def _results(events: pa.Table, config: Any) -> list[tuple[str, bytes]]:
    out = []
    for tables in evaluations(events, config):
        out += [_blob("verdicts", tables.verdicts), _blob("violations", tables.violations)]
    return out


def _evaluate_direct(config: Any) -> Any:
    """``mapInArrow``: blobs of direct events (whole traces of one file each) → result blobs."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            for blob in b.column("blob").to_pylist():
                events = pa.Table.from_batches(list(unpack(iter([blob]), EVENT_SCHEMA)))
                out = []
                for tables in evaluations(events, config):
                    out += [
                        _blob("verdicts", tables.verdicts),
                        _blob("violations", tables.violations),
                    ]
                if out:
                    yield _blobs_batch(out)

    return run


def _unpacker(kind: str) -> Any:
    schema = SCHEMAS[kind]

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            yield from unpack(iter(b.column("blob").to_pylist()), schema)

    return run


def _table(blobs: DataFrame, kind: str) -> DataFrame:
    """The rows of the ``kind`` blobs of a blob DataFrame as a DataFrame of that table."""
    return (
        blobs.filter(F.col("kind") == kind)
        .select("blob")
        .mapInArrow(_unpacker(kind), spark_schema(SCHEMAS[kind]))
    )


@dataclass(frozen=True)
class Ingested:
    """The store's tables as DataFrames (verdicts and violations when a config was given)."""

    files: DataFrame
    skipped: DataFrame
    spans: DataFrame
    events: DataFrame
    decisions: DataFrame
    verdicts: DataFrame | None
    violations: DataFrame | None
    duplicates: int
    files_table: pa.Table
    blobs: DataFrame  # every table's rows as (kind, blob): what ``arrow`` collects

    def tables(self) -> dict[str, DataFrame]:
        """Every table present, by its store name."""
        names = ("files", "skipped", "spans", "events", "decisions", "verdicts", "violations")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    def arrow(self) -> dict[str, pa.Table]:
        """Every table on the driver as Arrow, by one Spark job (for tables that fit)."""
        by_kind: dict[str, list[bytes]] = {}
        for row in self.blobs.toArrow().to_pylist():
            by_kind.setdefault(row["kind"], []).append(row["blob"])
        out = {"files": self.files_table}
        for name in self.tables():
            if name == "files":
                continue
            schema = plain_schema(SCHEMAS[name])
            batches = list(unpack(iter(by_kind.get(name, [])), SCHEMAS[name]))
            out[name] = pa.Table.from_batches(batches, schema=schema)
        return out


def ingest(
    spark: SparkSession,
    paths: list[str],
    *,
    group_by: str = "trace",
    config: Any = None,
    range_bytes: int = RANGE_BYTES,
    rows: int = chunks.EVENTS_ROWS,
) -> Ingested:
    """Read trace files with Spark into the store's tables (module doc).

    ``group_by``: ``trace`` or ``conversation`` (the first conversation id a
    trace's spans record, by file position; costs a second shuffle). With
    ``config`` the events are evaluated in the task that makes them. Decoding
    runs now (the files table needs every unit's counts); the rest is lazy.
    The paths must be readable by the executors (local mode, or shared storage).
    """
    if group_by not in ("trace", "conversation"):
        raise ValueError("group_by must be 'trace' or 'conversation'")
    if config is not None:
        permissions_of(config)
    p = plan([str(x) for x in paths], range_bytes)
    units = [json.dumps(asdict(u)) for u in p.units] or []
    units_df = spark.createDataFrame([(u,) for u in units], "unit string")
    if units:  # a few units per core: big files balance, small ones share a task
        cores = spark.sparkContext.defaultParallelism
        units_df = units_df.repartition(min(len(units), max(2, 2 * cores)))
    blobs = units_df.mapInArrow(_decode_units, BLOBS).persist(StorageLevel.MEMORY_AND_DISK)
    counts = pa.Table.from_pylist(
        [r.asDict() for r in _table(blobs, "counts").collect()], schema=COUNTS_SCHEMA
    )
    files = _files(p, counts)
    facts = _table(blobs, "facts")
    if group_by == "conversation":
        first = (
            facts.filter(F.col("conversation").isNotNull())
            .groupBy("trace_id")
            .agg(F.min_by("conversation", F.struct("file_id", "record", "pos")).alias("conv"))
        )
        facts = facts.join(first, "trace_id", "left").withColumn(
            chunks.TRACE_KEY, F.coalesce(F.col("conv"), F.col("trace_id"))
        )
    else:
        facts = facts.withColumn(chunks.TRACE_KEY, F.col("trace_id"))
    staged = (
        facts.repartition(F.col(chunks.TRACE_KEY))
        .sortWithinPartitions(chunks.TRACE_KEY, "file_id", "record", "pos")
        .mapInArrow(_events_of(config, rows), BLOBS)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    direct_events = blobs.filter(F.col("kind") == "events")
    results = staged
    if config is not None:
        results = staged.unionByName(
            direct_events.select("blob").mapInArrow(_evaluate_direct(config), BLOBS)
        )
    driver_skipped = spark.createDataFrame(
        pa.Table.from_batches([rows_batch(p.skipped, SKIPPED_SCHEMA)]),
        spark_schema(SKIPPED_SCHEMA),
    )
    kinds = ["skipped", "spans", "events", "decisions"]
    collected = blobs.filter(F.col("kind").isin(kinds)).unionByName(
        staged.filter(F.col("kind").isin(["events", "decisions"]))
    )
    if config is not None:
        collected = collected.unionByName(
            results.filter(F.col("kind").isin(["verdicts", "violations"]))
        )
    driver_blobs = spark.createDataFrame(
        [("skipped", pack(rows_batch(p.skipped, SKIPPED_SCHEMA)))], BLOBS
    )
    return Ingested(
        files=spark.createDataFrame(files, spark_schema(FILES_SCHEMA)),
        skipped=_table(blobs, "skipped").unionByName(driver_skipped),
        spans=_table(blobs, "spans"),
        events=_table(staged, "events").unionByName(_table(blobs, "events")),
        decisions=_table(staged, "decisions").unionByName(_table(blobs, "decisions")),
        verdicts=_table(results, "verdicts") if config is not None else None,
        violations=_table(results, "violations") if config is not None else None,
        duplicates=p.duplicates,
        files_table=files,
        blobs=collected.unionByName(driver_blobs),
    )


def _files(p: Plan, counts: pa.Table) -> pa.Table:
    """The ``files`` table: the driver's rows and one row per planned file (units summed)."""
    per: dict[int, list[Any]] = {}
    for r in counts.to_pylist():
        got = per.setdefault(r["file_id"], [0, 0, r["fmt"]])
        got[0] += r["records"]
        got[1] += r["skipped"]
    rows = list(p.files)
    seen: set[int] = set()
    for u in p.units:
        if u.file_id in seen:
            continue
        seen.add(u.file_id)
        n, bad, fmt = per.get(u.file_id, [0, 0, u.fmt])
        rows.append((u.file_id, u.path, fmt, _size(u.path), u.sha, n, bad))
    rows.sort(key=lambda r: r[0])
    return pa.Table.from_batches([rows_batch(rows, FILES_SCHEMA)]).cast(plain_schema(FILES_SCHEMA))


def _size(path: str) -> int:
    import os

    return os.path.getsize(path)
