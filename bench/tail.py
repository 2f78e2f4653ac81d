"""The serial tail of ``scan`` after ingest, stage by stage (issue 14): wall and CPU medians.

Ingests a file once into an in-memory store, then runs what ``cli.scan._run`` runs after
ingest ``--repeat`` times: ``api.audit`` on the store (its ``evaluate``, ``replace_tables``,
``save_provenance`` and ``summary`` timed apart), ``report.data.load``,
``report.baseline.with_matches`` and ``cli.outputs.write`` of the JSON report over an
existing file. CPU is the process's (every thread), "main thread" the caller's own: the
serial part where another core is free. Imports whichever ``sponsio_audit`` the
interpreter finds (for A/B runs).

    python bench/tail.py /tmp/b/spans_200000.jsonl /tmp/b/sponsio.yaml /tmp/out.json
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sponsio_audit import api
from sponsio_audit.arrow_setup import own_process, skip_pandas
from sponsio_audit.cli import contracts as contract_sources
from sponsio_audit.cli import outputs
from sponsio_audit.ingest import Store, ingest
from sponsio_audit.report import baseline
from sponsio_audit.report import data as report_data

TIMES: dict[str, list[tuple[float, float, float]]] = {}


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*a: Any, **kw: Any) -> Any:
        t, c, m = time.perf_counter(), time.process_time(), time.thread_time()
        try:
            return fn(*a, **kw)
        finally:
            TIMES.setdefault(name, []).append(
                (time.perf_counter() - t, time.process_time() - c, time.thread_time() - m)
            )

    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("spans")
    ap.add_argument("config")
    ap.add_argument("report")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    own_process()
    skip_pandas()
    cfg, _ = contract_sources.load([Path(args.config)], [])
    store = Store.open(None)
    ingest([args.spans], store, jobs=args.jobs)
    for name in ("evaluate", "replace_tables", "save_provenance", "summary"):
        setattr(api, name, _timed(name, getattr(api, name)))
    audit = _timed("audit", api.audit)
    load = _timed("load", report_data.load)
    matches = _timed("with_matches", baseline.with_matches)
    write = _timed("write", outputs.write)
    target = outputs.Target(Path(args.report), "json")
    for _ in range(args.repeat):
        t = time.perf_counter()
        result = audit(store, cfg, command=["bench/tail.py"])
        data = load(store, timelines=False, violations=result.violations, totals=result.summary)
        data = matches(store, data)
        write(data, target, quiet=True)
        TIMES.setdefault("tail", []).append((time.perf_counter() - t, 0.0, 0.0))
        del result, data
    for name, runs in TIMES.items():
        wall, cpu, main = (statistics.median(r[k] for r in runs) * 1000 for k in range(3))
        print(f"{name:16s} wall {wall:7.1f} ms  cpu {cpu:7.1f} ms  main thread {main:7.1f} ms")


if __name__ == "__main__":
    main()
