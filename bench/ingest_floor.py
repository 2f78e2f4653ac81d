"""Lower bounds of ingest time that no Python-level change can go under, per 100k spans.

``python bench/ingest_floor.py [--spans 100000]``

On the same generated GenAI spans as ``bench/ingest.py`` this times, each on
its own: parsing the OTLP/JSON lines (stdlib ``json``, ``orjson``, Arrow's C++
reader with 1 and all threads), parsing the protobuf records with upb and only
reading each span's fields from Python, and writing the rows ingest produces
(``spans``, ``span_facts``, ``events``, already as Arrow tables, in 50k-row
inserts inside ``Store.loading`` as ingest does) into a database file with the
benchmark's 256 MB buffer cap and into memory (as ``scan`` does), all three
tables and each alone, CPU time of the process (DuckDB's threads included);
and turning those tables' values, as the Python lists ingest builds, into
Arrow arrays. Every step runs with the cyclic GC paused, as ingest's chunks do.
Ingest at N spans/s needs each of its steps below 1/N s per span; these are
the floors.

It also prints what memory costs on this machine: touching a fresh anonymous
mapping page by page, the first time and again after it was unmapped and mapped
anew. On bare metal both are a kernel page fault (~0.1–0.3 µs a 4 KiB page); in
a VM whose host backs guest memory lazily (and takes back what the guest frees),
the first touch also pays a host fault, which shows in no user-space profile,
and a process pays it for every MB its peak RSS grows by.
"""

from __future__ import annotations

import argparse
import io
import json
import mmap
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.json as pj
from ingest import MEMORY_LIMIT, generate  # bench/ingest.py
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sponsio_audit.ingest import Store, ingest, otlp_structs
from sponsio_audit.ingest.chunks import acyclic
from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.sniff import proto_records
from sponsio_audit.ingest.tables import TABLES


def _paused(fn: Any) -> None:
    """``fn()`` with the cyclic GC paused, as ingest runs its chunks (``chunks.acyclic``)."""
    acyclic(fn)()


def _timed(what: str, spans: int, fn: Any) -> None:
    """Wall time and spans/s, and CPU µs per span (the steadier figure on a shared machine;
    with threads, the sum over them)."""
    t, c = time.perf_counter(), time.process_time()
    _paused(fn)
    dt, cpu = time.perf_counter() - t, time.process_time() - c
    print(
        f"{what:66} {dt:6.2f} s = {spans / dt:>9,.0f} spans/s, CPU {cpu / spans * 1e6:5.2f} µs/span"
    )


def _records(path: Path) -> list[Any]:
    with open(path, "rb") as f:
        data = f.read()
    return [rec for _, rec in proto_records(lambda: io.BytesIO(data), "delimited")]


def _walk_proto(path: Path) -> None:
    for rec in _records(path):
        req = ExportTraceServiceRequest()
        req.ParseFromString(rec)  # type: ignore[arg-type]
        for rs in req.resource_spans:
            for ss in rs.scope_spans:
                for sp in ss.spans:
                    attrs = {
                        kv.key: kv.value.string_value or kv.value.int_value for kv in sp.attributes
                    }
                    (sp.trace_id.hex(), sp.span_id.hex(), sp.name, sp.start_time_unix_nano, attrs)


def _parse_proto(path: Path) -> None:
    for rec in _records(path):
        ExportTraceServiceRequest().ParseFromString(rec)  # type: ignore[arg-type]


def _lines(path: Path, loads: Any) -> None:
    with open(path, "rb") as f:
        for line in f:
            loads(line)


def _decode_structs(path: Path) -> None:
    with open(path, "rb") as f:
        for line in f:
            otlp_structs.spans(line, Columns(0, 0))


def _msgspec(path: Path) -> None:
    with open(path, "rb") as f:
        for line in f:
            otlp_structs._DECODE(line)


def _to_arrow(columns: dict[str, dict[str, list[Any]]]) -> None:
    for name, cols in columns.items():
        schema = TABLES[name]
        for field in schema:
            pa.array(cols[field.name], type=field.type)


def _write(tables: dict[str, Any], db: Path | None) -> None:
    store = Store.open(db, memory_limit=MEMORY_LIMIT)
    with store.loading():
        for name, table in tables.items():
            for batch in table.to_batches(50_000):
                store.insert(name, batch)
    if db is not None:
        store.con.execute("CHECKPOINT")
    store.close()
    if db is not None:
        db.unlink()


def _fresh_memory(mb: int = 256) -> None:
    """Wall time to touch ``mb`` MB of a new anonymous mapping, one byte per 4 KiB page:
    the first mapping, then a second one right after the first is unmapped."""
    page = mmap.PAGESIZE
    for label in ("first touch", "after unmapping, again"):
        m = mmap.mmap(-1, mb << 20)
        t = time.perf_counter()
        for i in range(0, mb << 20, page):
            m[i] = 1
        dt = time.perf_counter() - t
        m.close()
        pages = (mb << 20) // page
        print(f"fresh memory, {label}: {dt / mb * 1e3:.2f} ms per MB "
              f"({dt / pages * 1e6:.2f} µs per {page // 1024} KiB page)")  # fmt: skip


def _cpu(what: str, spans: int, fn: Any) -> None:
    t = time.process_time()
    _paused(fn)
    dt = time.process_time() - t
    print(f"{what:66} {dt:6.2f} s CPU = {dt / spans * 1e6:5.2f} µs/span")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spans", type=int, default=100_000)
    n = ap.parse_args().spans
    with tempfile.TemporaryDirectory() as d:
        jsonl, pb = generate(Path(d), n, "jsonl"), generate(Path(d), n, "proto")
        print(f"{n:,} spans: JSONL {jsonl.stat().st_size / 1e6:.0f} MB, protobuf "
              f"{pb.stat().st_size / 1e6:.0f} MB")  # fmt: skip
        _fresh_memory()
        _timed("JSONL parse, stdlib json", n, lambda: _lines(jsonl, json.loads))
        _timed("JSONL parse, orjson (what ingest uses)", n, lambda: _lines(jsonl, orjson.loads))
        for threads in (False, True):
            opts = pj.ReadOptions(use_threads=threads, block_size=16 << 20)
            label = "all threads" if threads else "1 thread"
            _timed(
                f"JSONL parse, Arrow C++ reader, {label}",
                n,
                lambda o=opts: pj.read_json(jsonl, read_options=o),  # type: ignore[misc]
            )
        _timed("JSONL parse, msgspec into OTLP structs (what ingest uses)", n,
               lambda: _msgspec(jsonl))  # fmt: skip
        _timed("JSONL: msgspec + ingest's walk into column lists", n,
               lambda: _decode_structs(jsonl))  # fmt: skip
        _timed("protobuf parse, upb", n, lambda: _parse_proto(pb))
        _timed("protobuf parse + read each span's fields in Python", n, lambda: _walk_proto(pb))
        src = Store.open(None)
        ingest([pb], src)
        names = ("spans", "span_facts", "events")
        tables = {
            t: src.con.sql(f"SELECT * FROM {t}").to_arrow_table().cast(TABLES[t]) for t in names
        }
        src.close()
        db = Path(d) / "floor.duckdb"
        columns = {
            t: {f.name: tables[t].column(f.name).to_pylist() for f in TABLES[t]} for t in names
        }
        values = sum(len(c) * tables[t].num_rows for t, c in columns.items())
        _cpu(f"Python lists -> Arrow, the 3 tables' columns ({values / n:.0f} values/span)", n,
             lambda c=columns: _to_arrow(c))  # type: ignore[misc]  # fmt: skip
        del columns
        _timed(
            "store write of ready Arrow rows (spans, facts, events)", n, lambda: _write(tables, db)
        )
        for where, path in (("file", db), ("memory", None)):
            _cpu(f"store write, {where}: spans, span_facts, events", n,
                 lambda p=path: _write(tables, p))  # type: ignore[misc]  # fmt: skip
            for t in names:
                _cpu(f"store write, {where}: {t} alone", n,
                     lambda p=path, t=t: _write({t: tables[t]}, p))  # type: ignore[misc]  # fmt: skip


if __name__ == "__main__":
    main()
