"""``audit(events_df, config) -> (verdicts_df, violations_df)``: ``evaluate`` in ``mapInArrow``.

One shuffle puts each trace in one partition (``repartition(trace_id)``),
``sortWithinPartitions(trace_id, seq)`` orders its rows, and one
``mapInArrow`` call per partition streams the partition's Arrow batches
through ``evaluations`` (whole traces at a time, so a trace cut over
several Arrow batches is stitched back). No per-trace ``groupBy``: each
Python call has a fixed cost, and a partition holds many traces.

Both tables come out of the same pass: the function yields rows of a tagged
union (``_table`` = ``verdicts`` or ``violations``, the columns of both),
persisted, and the two DataFrames are filters of it; writing both reads the
events and evaluates once.

A trace with no events has no row in an events DataFrame; given the
``traces`` table (trace id, event count), its traces with no events are
judged as traces of length 0, as ``api.audit`` judges them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sponsio_audit import regexes
from sponsio_audit.engine import empty_raw
from sponsio_audit.evaluation import AuditTables, evaluations, permissions_of
from sponsio_audit.event import EVENT_SCHEMA, OPTIONAL_COLUMNS
from sponsio_audit.spark.arrow import plain, spark_schema
from sponsio_audit.verdicts import VERDICT_SCHEMA, VIOLATION_SCHEMA, build_tables

TAG = "_table"
"""Column of the tagged union saying which table a row belongs to."""


def union_schema() -> pa.Schema:
    """The tagged union of ``VERDICT_SCHEMA`` and ``VIOLATION_SCHEMA`` (every column nullable)."""
    fields = [pa.field(TAG, pa.string())]
    seen = {TAG}
    for schema in (VERDICT_SCHEMA, VIOLATION_SCHEMA):
        for f in schema:
            if f.name in seen:
                if not fields[[g.name for g in fields].index(f.name)].type.equals(plain(f.type)):
                    raise TypeError(f"column {f.name} has two types in the result tables")
                continue
            seen.add(f.name)
            fields.append(pa.field(f.name, plain(f.type)))  # Spark takes no dictionaries
    return pa.schema(fields)


UNION = union_schema()


def tagged(tables: AuditTables) -> Iterator[pa.RecordBatch]:
    """The rows of both tables as batches of the union schema."""
    for name, table in (("verdicts", tables.verdicts), ("violations", tables.violations)):
        if not table.num_rows:
            continue
        cols = []
        for f in UNION:
            if f.name == TAG:
                cols.append(pa.array([name] * table.num_rows, pa.string()))
            elif f.name in table.schema.names:
                cols.append(table.column(f.name).combine_chunks().cast(f.type))
            else:
                cols.append(pa.nulls(table.num_rows, f.type))
        yield from pa.Table.from_arrays(cols, schema=UNION).to_batches()


def time_limit(config: Any) -> float | None:
    """Seconds one lookaround-regex search may take under ``config`` (None: the default)."""
    ms = getattr(config, "regex_timeout_ms", None)
    return None if ms is None else ms / 1000.0


def partition_evaluator(
    config: Any, engine: str, rows: int
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function: a partition's batches (grouped by trace) → union rows."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        first = next(batches, None)
        if first is None:
            return
        reader = pa.RecordBatchReader.from_batches(first.schema, _chain(first, batches))
        with regexes.time_limit(time_limit(config)):  # in the executor, as api.audit does
            # one thread: Spark runs a task per core already
            for tables in evaluations(reader, config, engine=engine, rows=rows, threads=1):
                yield from tagged(tables)

    return run


def empty_tables(trace_ids: list[str], config: Any) -> AuditTables:
    """The verdicts and violations of traces with no events, each judged as a trace of
    length 0 (SEMANTICS.md §1), as ``api.audit`` judges them."""
    contracts = tuple(config.contracts)
    raw = empty_raw(sorted(trace_ids), contracts, permissions_of(config))
    return AuditTables(*build_tables(raw, EVENT_SCHEMA.empty_table(), contracts))


def empty_evaluator(config: Any) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function judging trace ids with no events → union rows."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            if b.num_rows:
                yield from tagged(empty_tables(b.column("trace_id").to_pylist(), config))

    return run


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest


def audit(
    events: DataFrame,
    config: Any,
    *,
    engine: str = "columnar",
    partitions: int | None = None,
    rows: int = 50_000,
    persist: bool = True,
    traces: DataFrame | None = None,
) -> tuple[DataFrame, DataFrame]:
    """Verdicts and violations DataFrames of ``config`` over a DataFrame of events.

    ``events`` needs the columns of ``EVENT_SCHEMA`` (by name; others are
    ignored). ``partitions``: the shuffle's partitions (default
    ``spark.sql.shuffle.partitions``). ``rows``: rows of whole traces evaluated
    at a time in a partition. ``persist``: keep the evaluated union
    (memory and disk) so that both tables come from one pass; ``unpersist`` the
    returned DataFrames' parent when done, or pass False to recompute per action.
    ``traces``: the ``traces`` table (``trace_id``, ``events``); its traces with no
    events and no row in ``events`` are judged too (module doc).
    """
    permissions_of(config)  # contracts without their permissions: refused here, on the driver
    missing = [n for n in EVENT_SCHEMA.names if n not in events.columns]
    if any(n not in OPTIONAL_COLUMNS for n in missing):
        raise ValueError(f"events lack the column(s) {', '.join(missing)}")
    for name in missing:  # never-shared prompts: the columns may be left out, as in evaluate
        events = events.withColumn(name, F.lit(None).cast("bigint"))
    df = events.select(*EVENT_SCHEMA.names)
    by = F.col("trace_id")
    df = df.repartition(partitions, by) if partitions else df.repartition(by)
    df = df.sortWithinPartitions("trace_id", "seq")
    union = df.mapInArrow(partition_evaluator(config, engine, rows), spark_schema(UNION))
    if traces is not None:
        empty = (
            traces.filter(F.col("events") == 0)
            .select("trace_id")
            .distinct()
            .join(events.select("trace_id").distinct(), "trace_id", "left_anti")
        )
        union = union.unionByName(empty.mapInArrow(empty_evaluator(config), spark_schema(UNION)))
    if persist:
        union = union.persist(StorageLevel.MEMORY_AND_DISK)
    verdicts = union.filter(F.col(TAG) == "verdicts").select(*VERDICT_SCHEMA.names)
    violations = union.filter(F.col(TAG) == "violations").select(*VIOLATION_SCHEMA.names)
    return verdicts, violations
