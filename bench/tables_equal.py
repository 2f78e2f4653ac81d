"""Every store table, row for row: this checkout's ingest against a reference checkout's.

``python bench/tables_equal.py [--ref-python /work/main/.venv/bin/python] [--sets ...]
[--jobs 1,2] [--random 300] [--big]``

Each set of inputs is ingested by a child process of the reference interpreter
(a venv whose ``sponsio_audit`` is the reference checkout, main by default)
and by this checkout's, with each ``--jobs`` value, into database files; then
every table of ``ingest.tables.TABLES`` and any other table either side made is
compared: the same columns, the same rows (as a multiset, ``ORDER BY ALL``) and
the same insertion order, plus the same ``IngestSummary``. Sets:

- ``fixtures``: ``fixtures/`` as one ingest, by trace and by conversation;
- ``external``: the shared third-party files (``/work/shared/data/external``);
- ``hostile``: every case of ``tests/hostile/inputs.CASES``, one ingest each;
- ``bench``: ``bench/ingest.py``'s corpus, 20k spans (``--big``: 200k too), JSONL and protobuf;
- ``wide``: one trace of 45k spans over 45 request lines (the hostile ``wide_trace`` shape);
- ``random``: ``--random`` span trees drawn from ``tests/ingest/test_property``'s strategies,
  recorded with the OTel SDK and exported as OTLP/JSON and protobuf; ingested
  per encoding and all together (each trace in two files: the cross-file path).

Exit status 1 when anything differs; each difference is printed with its table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REF_PYTHON = "/work/main/.venv/bin/python"
EXTERNAL = Path("/work/shared/data/external")


def child(db: str, jobs: int, group_by: str, paths: list[str]) -> None:
    """Ingest ``paths`` into ``db`` with whichever ``sponsio_audit`` this interpreter has."""
    from dataclasses import asdict

    import sponsio_audit
    from sponsio_audit.ingest import Store, ingest

    store = Store.open(db)
    s = ingest(paths, store, jobs=jobs, group_by=group_by)
    store.close()
    print(json.dumps({"summary": asdict(s), "module": sponsio_audit.__file__}))


def _run(python: str, db: Path, jobs: int, group_by: str, paths: list[Path]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [python, __file__, "--child", str(db), str(jobs), group_by, *map(str, paths)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    res: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return res


def _tables(con: Any) -> list[str]:
    return sorted(
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    )


def compare(a: Path, b: Path) -> list[str]:
    """Differences between two stores (empty when every table is equal, row for row)."""
    import duckdb

    ca, cb = duckdb.connect(str(a), read_only=True), duckdb.connect(str(b), read_only=True)
    diffs: list[str] = []
    try:
        ta, tb = _tables(ca), _tables(cb)
        if ta != tb:
            diffs.append(f"tables differ: {ta} vs {tb}")
        for t in sorted(set(ta) & set(tb)):
            cols_a = ca.execute(f'DESCRIBE "{t}"').fetchall()
            cols_b = cb.execute(f'DESCRIBE "{t}"').fetchall()
            if [c[:2] for c in cols_a] != [c[:2] for c in cols_b]:
                diffs.append(f"{t}: columns differ: {cols_a} vs {cols_b}")
                continue
            ra = ca.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall()
            rb = cb.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall()
            if ra != rb:
                n = next((i for i, (x, y) in enumerate(zip(ra, rb, strict=False)) if x != y), None)
                where = (
                    f"first differing row {n}: {ra[n]!r}\n    vs {rb[n]!r}" if n is not None else ""
                )
                diffs.append(f"{t}: {len(ra)} vs {len(rb)} rows; {where}"[:2000])
                continue
            if (
                ca.execute(f'SELECT * FROM "{t}"').fetchall()
                != cb.execute(f'SELECT * FROM "{t}"').fetchall()
            ):
                diffs.append(f"{t}: same rows, other insertion order")
    finally:
        ca.close()
        cb.close()
    return diffs


def _random(d: Path, n: int) -> list[Path]:
    """``n`` random SDK span trees, each as OTLP/JSON and protobuf files (``d/jsonl``, ``d/pb``)."""
    sys.path.insert(0, str(REPO))
    warnings.simplefilter("ignore")
    from hypothesis import strategies as st

    from tests.ingest.conftest import make_otel
    from tests.ingest.test_property import tree

    strat = st.tuples(st.lists(tree(), min_size=1, max_size=2), st.sampled_from(["svc", "ünï-svc"]))
    (d / "jsonl").mkdir(parents=True)
    (d / "pb").mkdir()
    for i in range(n):
        trees, svc = strat.example()
        ids = make_otel.FixedIds(trace_base=(0xABC << 64) + 1000 * i)
        req = make_otel.spans_request(trees, svc, ids)
        make_otel.write_all(d / f"t{i:04}", [req])
        (d / f"t{i:04}.jsonl").rename(d / "jsonl" / f"t{i:04}.jsonl")
        (d / f"t{i:04}.pb").rename(d / "pb" / f"t{i:04}.pb")
        for extra in d.glob(f"t{i:04}*"):
            extra.unlink()
    return [d / "jsonl", d / "pb"]


def _sets(names: list[str], d: Path, random_n: int, big: bool) -> list[tuple[str, str, list[Path]]]:
    """(name, group_by, paths) of every input set asked for, written under ``d``."""
    out: list[tuple[str, str, list[Path]]] = []
    if "fixtures" in names:
        out += [
            ("fixtures", "trace", [REPO / "fixtures"]),
            ("fixtures", "conversation", [REPO / "fixtures"]),
        ]
    if "external" in names and EXTERNAL.is_dir():
        out.append(("external", "trace", [EXTERNAL]))
    if "hostile" in names:
        sys.path.insert(0, str(REPO))
        from tests.hostile.inputs import CASES, build

        for case in CASES:
            build(case, d / "hostile" / case.name)
            out.append((f"hostile/{case.name}", "trace", [d / "hostile" / case.name]))
    if "bench" in names:
        sys.path.insert(0, str(REPO / "bench"))
        from ingest import generate  # bench/ingest.py

        (d / "bench").mkdir()
        for size in (20_000, 200_000) if big else (20_000,):
            for fmt in ("jsonl", "proto"):
                out.append((f"bench/{fmt}/{size}", "trace", [generate(d / "bench", size, fmt)]))
    if "wide" in names:
        sys.path.insert(0, str(REPO))
        from tests.hostile.otlp import wide_trace

        wide_trace(d / "wide.jsonl", 45)
        out.append(("wide", "trace", [d / "wide.jsonl"]))
    if "random" in names:
        js, pb = _random(d / "random", random_n)
        out += [("random/jsonl", "trace", [js]), ("random/pb", "trace", [pb])]
        out += [("random/both", "trace", [js, pb]), ("random/both", "conversation", [js, pb])]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--ref-python", default=REF_PYTHON)
    ap.add_argument(
        "--python", default=sys.executable, help="interpreter of the checkout under test"
    )
    ap.add_argument("--sets", default="fixtures,external,hostile,bench,wide,random")
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--random", type=int, default=300)
    ap.add_argument("--big", action="store_true", help="the 200k-span bench corpus too")
    a = ap.parse_args()
    if a.child:
        db, jobs, group_by, *paths = a.child
        child(db, int(jobs), group_by, paths)
        return
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, group_by, paths in _sets(a.sets.split(","), d, a.random, a.big):
            ref_db = d / "ref.duckdb"
            ref = _run(a.ref_python, ref_db, 1, group_by, paths)
            for jobs in (int(j) for j in a.jobs.split(",")):
                new_db = d / "new.duckdb"
                new = _run(a.python, new_db, jobs, group_by, paths)
                diffs = compare(ref_db, new_db)
                if ref["summary"] != new["summary"]:
                    diffs.append(f"summary: {ref['summary']} vs {new['summary']}")
                s = new["summary"]
                status = "equal" if not diffs else "DIFFERENT"
                print(
                    f"{name:34} {group_by:12} jobs={jobs}: {status} "
                    f"(records {s['records']}, spans {s['spans']}, events {s['events']}, "
                    f"skipped {s['skipped']})",
                    flush=True,
                )
                for x in diffs:
                    print(f"    {x}", flush=True)
                bad += bool(diffs)
                new_db.unlink()
            ref_db.unlink()
    print("all tables equal" if not bad else f"{bad} run(s) differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
