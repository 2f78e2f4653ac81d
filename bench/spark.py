"""Benchmark: the default engine against Spark local mode, side by side, and Spark's fixed costs.

    python bench/spark.py                                   # 270k and 2.7M events
    python bench/spark.py --events 270000 --master 'local[2]' --ingest 270000

For each size, an events table of traces of 100 events (``bench/evaluate.py``'s
generator: realistic tool mix, arguments, LLM text, token counts) is judged
against ``bench/evaluate.py``'s 20 pattern contracts:

- default: ``sponsio_audit.evaluate`` on the Arrow table in this process;
- Spark: the table as a Parquet file, ``spark.read.parquet`` →
  ``sponsio_audit.spark.audit`` → verdicts and violations written as Parquet.

For the sizes in ``--ingest`` it also runs ingest + evaluate from OTLP JSON
Lines files (``bench/ingest.py``'s GenAI generator, ~0.9 events per span):
``api.audit(paths)`` against ``sponsio_audit.spark.ingest(..., config=…)``
with both result tables written as Parquet. Spark's fixed costs are printed
first: starting the session, a first and a second one-row ``mapInArrow``
job, and ``spark.audit`` of a 100-event table. Both engines' verdicts are
counted and must agree.

Every figure is wall seconds and CPU seconds of this process and all its
descendants (the JVM and Spark's Python workers included, read from
``/proc``), with the load average beside them: on a shared machine the wall
time says little, and the CPU time is what the work costs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import evaluate as bench_eval  # noqa: E402  (bench/evaluate.py)

from sponsio_audit.evaluation import ContractSet, evaluate  # noqa: E402


def _session(master: str) -> Any:
    import os

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName("sponsio-audit-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", "3g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process and its descendants, living or reaped."""
    tick = os.sysconf("SC_CLK_TCK")
    procs: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2 :].split()  # fields 3.. of proc(5)
        procs[int(name)] = (int(rest[1]), sum(int(x) for x in rest[11:15]))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += procs.get(pid, (0, 0))[1]
        todo += children.get(pid, [])
    return total / tick


@dataclass(frozen=True)
class Cost:
    """What one step cost: wall and CPU seconds (this process tree), load average after."""

    wall: float
    cpu: float
    load: float

    def __str__(self) -> str:
        return f"{self.wall:8.2f} s wall {self.cpu:8.2f} s CPU (load {self.load:.1f})"


def _timed(f: Any) -> tuple[Any, Cost]:
    t, c = time.perf_counter(), tree_cpu()
    out = f()
    return out, Cost(time.perf_counter() - t, tree_cpu() - c, os.getloadavg()[0])


def fixed_costs(master: str) -> tuple[Any, list[tuple[str, Cost]]]:
    """The session and the seconds of Spark's fixed costs."""

    def one_row(batches: Any) -> Any:
        yield from batches

    spark, start = _timed(lambda: _session(master))
    _, first = _timed(lambda: spark.range(1).mapInArrow(one_row, "id long").collect())
    _, second = _timed(lambda: spark.range(1).mapInArrow(one_row, "id long").collect())
    tiny = bench_eval.generate(1, 100)
    cfg = ContractSet(tuple(bench_eval.contracts()), {})
    from sponsio_audit import spark as spark_audit

    df = spark.createDataFrame(tiny)

    def audit_tiny() -> Any:
        v, x = spark_audit.audit(df, cfg)
        return v.count(), x.count()

    _, small = _timed(audit_tiny)
    return spark, [
        ("session start (JVM, context)", start),
        ("first one-row mapInArrow job (Python workers start)", first),
        ("second one-row mapInArrow job", second),
        ("spark.audit of 100 events, both tables counted", small),
    ]


def evaluate_side_by_side(spark: Any, n_events: int, tmp: Path) -> dict[str, Any]:
    """Default ``evaluate`` and ``spark.audit`` on the same generated events."""
    from sponsio_audit import spark as spark_audit

    table = bench_eval.generate(n_events // 100, 100)
    cfg = ContractSet(tuple(bench_eval.contracts()), {})
    tables, local = _timed(lambda: evaluate(table, cfg))
    src = tmp / f"events_{n_events}.parquet"
    pq.write_table(table, src)
    out = tmp / f"out_{n_events}"

    def on_spark() -> None:
        v, x = spark_audit.audit(spark.read.parquet(str(src)), cfg)
        v.write.mode("overwrite").parquet(str(out / "verdicts"))
        x.write.mode("overwrite").parquet(str(out / "violations"))

    _, remote = _timed(on_spark)
    got = pq.read_table(out / "verdicts").num_rows, pq.read_table(out / "violations").num_rows
    want = tables.verdicts.num_rows, tables.violations.num_rows
    return {"events": table.num_rows, "default": local, "spark": remote, "agree": got == want}


def ingest_side_by_side(
    spark: Any, n_events: int, tmp: Path, default: bool = True
) -> dict[str, Any]:
    """``api.audit(paths)`` and ``spark.ingest(paths, config=…)`` on the same OTLP file."""
    import ingest as bench_ingest  # bench/ingest.py

    from sponsio_audit.api import audit
    from sponsio_audit.config.loader import load_pack
    from sponsio_audit.spark.ingestion import ingest as spark_ingest

    spans = -(-n_events * 10 // 9 // 1000) * 1000  # 9 events per 10-span trace
    d = tmp / f"otlp_{n_events}"
    d.mkdir()
    path = bench_ingest.generate(d, spans, "jsonl")
    cfg = load_pack("default")
    if default:
        res, local = _timed(lambda: audit([str(path)], cfg))
        print(f"  (default engine: {res.summary.events:,} events: {local})", flush=True)
    out = tmp / f"ingest_out_{n_events}"

    def on_spark() -> None:
        got = spark_ingest(spark, [str(path)], config=cfg)
        assert got.verdicts is not None and got.violations is not None
        got.verdicts.write.mode("overwrite").parquet(str(out / "verdicts"))
        got.violations.write.mode("overwrite").parquet(str(out / "violations"))

    _, remote = _timed(on_spark)
    print(f"  (Spark: {remote})", flush=True)
    if not default:
        return {"events": n_events, "bytes": path.stat().st_size, "default": None,
                "spark": remote, "agree": None}  # fmt: skip
    got = pq.read_table(out / "verdicts").num_rows, pq.read_table(out / "violations").num_rows
    want = res.verdicts.num_rows, res.violations.num_rows
    return {
        "events": res.summary.events,
        "bytes": path.stat().st_size,
        "default": local,
        "spark": remote,
        "agree": got == want,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", default="270000,2700000", help="evaluate sizes (events)")
    p.add_argument(
        "--ingest", default="270000,2700000", help="ingest + evaluate sizes ('' for none)"
    )
    p.add_argument("--master", default="local[2]")
    p.add_argument("--no-fixed", action="store_true", help="skip the fixed costs")
    p.add_argument("--spark-only", action="store_true", help="ingest: skip the default engine")
    a = p.parse_args(argv)
    print(f"pyarrow {pa.__version__}; Spark master {a.master}; {os.cpu_count()} CPUs")
    if a.no_fixed:
        spark = _session(a.master)
    else:
        spark, costs = fixed_costs(a.master)
        print("\nSpark fixed costs")
        for what, c in costs:
            print(f"  {what:<55} {c}")
    tmp = Path(tempfile.mkdtemp(prefix="sponsio-bench-spark-"))
    try:
        print("\nevaluate (20 pattern contracts)")
        for n in [int(x) for x in a.events.split(",") if x]:
            r = evaluate_side_by_side(spark, n, tmp)
            print(f"  {r['events']:>10,} events  default {r['default']}")
            print(f"  {'':>10}         Spark   {r['spark']}  agree {r['agree']}")
        sizes = [int(x) for x in a.ingest.split(",") if x]
        if sizes:
            print("\ningest + evaluate from OTLP JSON Lines (default pack)")
            for n in sizes:
                r = ingest_side_by_side(spark, n, tmp, default=not a.spark_only)
                print(f"  {r['events']:>10,} events ({r['bytes'] / 1e6:.0f} MB)")
                print(f"  {'':>10}  default {r['default']}")
                print(f"  {'':>10}  Spark   {r['spark']}  agree {r['agree']}")
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
