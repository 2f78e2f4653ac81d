"""``ingest(spark, paths)``: trace files → the store's tables as DataFrames, decoded on executors.

The driver plans (``spark.plan``): file ids, sha256 duplicates, files
skipped whole, and line-aligned byte ranges of OTLP JSON Lines files with
the line number each starts at. The executors (``spark.tasks``) run the
project's own code on each unit: ``chunks.decode`` for OTLP records,
``direct.load`` for the formats that are events already.
The spans' convention facts and the GenAI log records (``span_logs``; a
trace's log records may sit in another file or range than its spans) are
shuffled together once by trace (or conversation) key, sorted by (file,
record, position); each span's unrecorded facts are filled from its log
records by ``attach``'s own SQL and the spans turned into events and
``traces`` counts by ``chunks.events``; with a ``config``, the same task
evaluates them (``evaluations``), so ingest and evaluation share one stage,
and the traces with no events are judged as ``api.audit`` judges them.
Nothing of the conventions is written again here.

Standard input (``-``) is copied to a temporary file on the driver and
planned like a file (listed as ``-``); the copy lives as long as the returned
``Ingested``. A cluster's executors cannot read the driver's disk, so on a
master that is not ``local`` ``-`` is refused with that reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import weakref
from dataclasses import asdict, dataclass
from typing import IO, Any

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sponsio_audit.evaluation import permissions_of
from sponsio_audit.ingest import chunks
from sponsio_audit.ingest.tables import FILES_SCHEMA, SKIPPED_SCHEMA, rows_batch
from sponsio_audit.spark.arrow import pack, plain_schema, spark_schema, unpack
from sponsio_audit.spark.plan import RANGE_BYTES, Plan, plan
from sponsio_audit.spark.tasks import (
    BLOBS,
    COUNTS_SCHEMA,
    SCHEMAS,
    SIGNAL,
    decode_units,
    evaluate_direct,
    events_of,
    judge_empty,
    table_of,
)


@dataclass(frozen=True)
class Ingested:
    """The store's tables as DataFrames (verdicts and violations when a config was given)."""

    files: DataFrame
    skipped: DataFrame
    spans: DataFrame
    events: DataFrame
    decisions: DataFrame
    span_logs: DataFrame
    traces: DataFrame
    verdicts: DataFrame | None
    violations: DataFrame | None
    duplicates: int
    files_table: pa.Table
    blobs: DataFrame  # every table's rows as (kind, blob): what ``arrow`` collects

    def tables(self) -> dict[str, DataFrame]:
        """Every table present, by its store name."""
        names = (
            "files",
            "skipped",
            "spans",
            "events",
            "decisions",
            "span_logs",
            "traces",
            "verdicts",
            "violations",
        )
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
    The paths must be readable by the executors (local mode, or shared storage);
    ``-`` is standard input, on a local master only (module doc).
    """
    if group_by not in ("trace", "conversation"):
        raise ValueError("group_by must be 'trace' or 'conversation'")
    if config is not None:
        permissions_of(config)
    names = [str(x) for x in paths]
    copies = _stdin_copies(spark, names.count("-"))
    try:
        got = _ingest(spark, names, group_by, config, range_bytes, rows, copies)
    except BaseException:
        _remove(copies)
        raise
    if copies:
        weakref.finalize(got, _remove, copies)
    return got


def _stdin_copies(spark: SparkSession, n: int, stdin: IO[bytes] | None = None) -> list[str]:
    """``n`` temporary files holding standard input (the first all of it, as ``ingest``
    reads a second ``-`` after the first one consumed it)."""
    if not n:
        return []
    master = str(spark.sparkContext.master)
    if not master.startswith("local"):
        raise ValueError(
            f"-: standard input is copied to the driver's disk, which the executors of "
            f"master {master} cannot read; write it to storage they share and give that path"
        )
    src = stdin if stdin is not None else sys.stdin.buffer
    out: list[str] = []
    try:
        for _ in range(n):
            with tempfile.NamedTemporaryFile(prefix="sponsio-stdin-", delete=False) as tmp:
                out.append(tmp.name)
                shutil.copyfileobj(src, tmp)
    except BaseException:
        _remove(out)
        raise
    return out


def _remove(paths: list[str]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):  # already gone
            os.unlink(path)


def _ingest(
    spark: SparkSession,
    paths: list[str],
    group_by: str,
    config: Any,
    range_bytes: int,
    rows: int,
    stdin: list[str],
) -> Ingested:
    p = plan(paths, range_bytes, stdin)
    units = [json.dumps(asdict(u)) for u in p.units] or []
    units_df = spark.createDataFrame([(u,) for u in units], "unit string")
    if units:  # a few units per core: big files balance, small ones share a task
        cores = spark.sparkContext.defaultParallelism
        units_df = units_df.repartition(min(len(units), max(2, 2 * cores)))
    blobs = units_df.mapInArrow(decode_units, BLOBS).persist(StorageLevel.DISK_ONLY)
    counts = pa.Table.from_pylist(
        [r.asDict() for r in table_of(blobs, "counts").collect()], schema=COUNTS_SCHEMA
    )
    files = _files(p, counts)
    # a trace's spans and log records go through the same shuffle (one row kind each)
    facts = (
        table_of(blobs, "facts")
        .withColumn(SIGNAL, F.lit("span"))
        .unionByName(
            table_of(blobs, "span_logs").withColumn(SIGNAL, F.lit("log")),
            allowMissingColumns=True,
        )
    )
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
        .mapInArrow(events_of(config, rows), BLOBS)
        .persist(StorageLevel.DISK_ONLY)
    )
    direct_events = blobs.filter(F.col("kind") == "events")
    traces = staged.filter(F.col("kind") == "traces").unionByName(
        blobs.filter(F.col("kind") == "traces")
    )
    results = staged
    if config is not None:
        results = staged.unionByName(
            direct_events.select("blob").mapInArrow(evaluate_direct(config), BLOBS)
        ).unionByName(traces.select("blob").mapInArrow(judge_empty(config), BLOBS))
    driver_skipped = spark.createDataFrame(
        pa.Table.from_batches([rows_batch(p.skipped, SKIPPED_SCHEMA)]),
        spark_schema(SKIPPED_SCHEMA),
    )
    kinds = ["skipped", "spans", "events", "decisions", "span_logs", "traces"]
    collected = blobs.filter(F.col("kind").isin(kinds)).unionByName(
        staged.filter(F.col("kind").isin(["events", "decisions", "traces"]))
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
        skipped=table_of(blobs, "skipped").unionByName(driver_skipped),
        spans=table_of(blobs, "spans"),
        events=table_of(staged, "events").unionByName(table_of(blobs, "events")),
        decisions=table_of(staged, "decisions").unionByName(table_of(blobs, "decisions")),
        span_logs=table_of(blobs, "span_logs"),
        traces=table_of(staged, "traces").unionByName(table_of(blobs, "traces")),
        verdicts=table_of(results, "verdicts") if config is not None else None,
        violations=table_of(results, "violations") if config is not None else None,
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
        rows.append((u.file_id, u.listed, fmt, _size(u.path), u.sha, n, bad))
    rows.sort(key=lambda r: r[0])
    return pa.Table.from_batches([rows_batch(rows, FILES_SCHEMA)]).cast(plain_schema(FILES_SCHEMA))


def _size(path: str) -> int:
    return os.path.getsize(path)
