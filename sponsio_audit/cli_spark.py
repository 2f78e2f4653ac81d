"""The work of ``scan --engine spark``: ingest and evaluate on Spark, every table as Parquet.

The CLI then reads the Parquet files back into a store (``api.read_parquet``)
and renders the report from it, as ``report --parquet DIR`` does, so both
engines print the same report from the same tables. ``violations.parquet``
gets the default engine's ``path`` and ``fingerprint`` columns; the
fingerprint's matched argument is read from the blamed events, which a
broadcast join brings next to each violation.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sponsio_audit.api import contracts_table
from sponsio_audit.report.parquet import EXTRA, with_path_and_fingerprint
from sponsio_audit.spark.arrow import spark_schema
from sponsio_audit.spark.ingestion import ingest
from sponsio_audit.verdicts import VIOLATION_SCHEMA


def session(master: str) -> SparkSession:
    """A Spark session on ``master`` (a local one bound to 127.0.0.1, without UI, its
    Python workers running this interpreter)."""
    builder = SparkSession.builder.master(master).appName("sponsio-audit")
    if master.startswith("local"):
        # local workers are started from this environment (the spark.pyspark.python
        # setting is not read there); a PYSPARK_PYTHON the user set wins
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        n = master[len("local[") : -1] if master.startswith("local[") else "1"
        cores = (os.cpu_count() or 2) if n == "*" else (int(n) if n.isdigit() else 2)
        builder = (
            builder.config("spark.sql.shuffle.partitions", str(2 * cores))
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


MATCHED_FROM = ("tool", "args", "content", "prompt")
"""The event columns a fingerprint's matched argument is read from (``BLAMED_EVENTS``)."""
_EVENT = "_event_"


def _violations_out(
    violations: DataFrame, events: DataFrame, files: pa.Table, contracts: pa.Table
) -> DataFrame:
    """``violations`` with ``path`` and ``fingerprint`` (``report.parquet``'s two columns),
    each blamed row's fingerprint made with its event, as the default engine makes it."""
    keys = violations.filter(F.col("blamed")).select("trace_id", "seq").distinct()
    blamed = events.join(F.broadcast(keys), ["trace_id", "seq"], "left_semi").select(
        "trace_id", "seq", *[F.col(c).alias(_EVENT + c) for c in MATCHED_FROM]
    )
    names = list(violations.columns)
    joined = violations.join(F.broadcast(blamed), ["trace_id", "seq"], "left").select(
        *names, *[_EVENT + c for c in MATCHED_FROM]
    )

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            t = pa.Table.from_batches([b])
            at = t.select(["trace_id", "seq", *[_EVENT + c for c in MATCHED_FROM]])
            at = at.rename_columns(["trace_id", "seq", *MATCHED_FROM])
            at = at.filter(t.column("blamed").fill_null(False))
            table = with_path_and_fingerprint(t.select(names), files, contracts, at)
            yield from table.to_batches()

    fields = [VIOLATION_SCHEMA.field(n) for n in names]
    extra = [pa.field(n, pa.string()) for n in EXTRA]
    return joined.mapInArrow(run, spark_schema(pa.schema(fields + extra)))


def scan(
    paths: list[str],
    config: Any,
    directory: str | Path,
    *,
    master: str = "local[*]",
    group_by: str = "trace",
    agent: str | None = None,
) -> None:
    """Ingest ``paths``, evaluate ``config`` (only ``agent``'s contracts when given) and
    write every table as ``directory/NAME.parquet`` (Spark writes directories)."""
    if agent is not None:
        config = replace(config, contracts=[c for c in config.contracts if c.agent in (agent, "*")])
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    contracts = contracts_table(list(config.contracts))
    running = SparkSession.getActiveSession()  # a caller's session is used, and left running
    spark = running if running is not None else session(master)
    try:
        got = ingest(spark, paths, group_by=group_by, config=config)
        for name, df in got.tables().items():
            if name == "violations":
                df = _violations_out(df, got.events, got.files_table, contracts)
            df.write.mode("overwrite").parquet(str(out / f"{name}.parquet"))
        pq.write_table(contracts, out / "contracts.parquet", compression="zstd")
    finally:
        if running is None:
            spark.stop()
