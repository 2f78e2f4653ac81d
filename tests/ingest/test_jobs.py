"""``ingest(jobs=N)``: worker processes and chunking never change what is loaded.

The corpus mixes every OTLP fixture, the demo corpus, session-log-free bad input
(a broken line, a truncated length-prefixed file, a gzip stream cut in the
middle) and a trace split over two files. Chunks are made tiny so that a file
spans many chunks, several are in flight when a stream breaks, and traces are
cut across ``span_facts`` batches.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import shutil
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.ingest import Store, chunks, ingest, workers
from sponsio_audit.ingest.workers import AUTO_BYTES, Workers, cpus, resolve_jobs
from tests.conftest import fetched

from .conftest import FIXTURES, OTEL, split_trace

TABLES = {
    "files": "path, format, bytes, sha256, records, skipped",
    "skipped": "f.path, s.record, s.reason",
    "spans": "*",
    "span_facts": "*",
    "events": "*",
    "decisions": "*",
}


def _corpus(tmp: Path) -> Path:
    root = tmp / "corpus"
    shutil.copytree(OTEL, root / "otel")
    shutil.copytree(FIXTURES / "demo" / "traces", root / "demo")
    lines = (OTEL / "genai.jsonl").read_bytes().splitlines(keepends=True)
    bad = root / "bad"
    bad.mkdir()
    (bad / "broken_line.jsonl").write_bytes(b"".join([*lines, b"{not json\n", *lines[:1]]))
    pb = (OTEL / "genai.pb").read_bytes()
    (bad / "truncated.pb").write_bytes(pb + pb[: len(pb) // 2])
    many = b"".join(lines * 40)
    cut = gzip.compress(many)
    (bad / "cut.jsonl.gz").write_bytes(cut[: len(cut) * 2 // 3])
    # one trace whose spans are split over two files (the parent in the later one);
    # ids no other fixture uses
    split_trace(root, ("split_a.jsonl", "split_b.jsonl"), "split-agent", "split-svc", 0x5B117 << 64)
    return root


def _tables(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    out = {}
    for name, cols in TABLES.items():
        if name == "skipped":
            sql = f"SELECT {cols} FROM skipped s JOIN files f USING (file_id) ORDER BY ALL"
        else:
            sql = f"SELECT {cols} FROM {name} ORDER BY ALL"
        out[name] = fetched(store.con, sql)
    return out


def _ingest(root: Path, jobs: int) -> tuple[Any, dict[str, list[tuple[Any, ...]]]]:
    store = Store.open(None)
    summary = ingest([root], store, jobs=jobs)
    return summary, _tables(store)


def test_jobs_and_chunk_sizes_load_identical_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path)
    want_summary, want = _ingest(root, 1)
    # the corpus exercises what the test claims to
    assert want_summary.spans > 100 and want_summary.skipped >= 3
    reasons = " | ".join(r[2] for r in want["skipped"])
    assert "invalid JSON" in reasons and "truncated" in reasons and "unreadable stream" in reasons
    split = [e for e in want["events"] if e[4] == "split-agent"]  # agent inherited across files
    assert [(e[3], e[5]) for e in split] == [("tool_call", "t")]

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1_500)  # chunking runs in this process
    monkeypatch.setattr(chunks, "EVENTS_ROWS", 7)
    # jobs 2: the first chunks mapped here while the workers start, and (start_inline off)
    # every chunk in a worker
    for jobs, inline in ((1, True), (2, True), (2, False)):
        monkeypatch.setattr(workers, "START_INLINE", inline)
        summary, got = _ingest(root, jobs)
        assert summary == want_summary, (jobs, inline)
        for name in TABLES:
            assert got[name] == want[name], (jobs, inline, name)


def test_cut_stream_keeps_every_record_read_before_the_break(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With records still in the workers when the gzip stream breaks, none is lost."""
    root = _corpus(tmp_path)
    path = root / "bad" / "cut.jsonl.gz"
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1_500)
    lines = (OTEL / "genai.jsonl").read_bytes().splitlines()
    per_line = len(lines)
    for jobs in (1, 2):
        store = Store.open(None)
        s = ingest([path], store, jobs=jobs)
        loaded = s.records - s.skipped
        assert s.skipped == 1 and loaded > 2 * per_line, jobs  # several lines survived
        (reason,) = store.con.execute("SELECT reason FROM skipped").fetchall()[0]
        assert reason.startswith("unreadable stream:")
        (n,) = store.con.execute("SELECT count(DISTINCT record) FROM spans").fetchall()[0]
        assert n == loaded


def test_auto_jobs_use_every_cpu_only_for_large_inputs() -> None:
    """The CLI default (--jobs 0) starts workers only when they pay for their start-up."""
    assert resolve_jobs(0, AUTO_BYTES - 1) == 1
    idle = 0.0  # an idle machine: one worker per CPU (when there are two or more)
    assert resolve_jobs(0, AUTO_BYTES, load=idle) == (cpus() if cpus() >= 2 else 1)
    assert resolve_jobs(0, AUTO_BYTES, load=float(cpus())) == 1  # no idle CPU: no workers
    assert resolve_jobs(0, None) == 1  # stdin: size unknown
    assert resolve_jobs(3, 10) == 3  # an explicit count is taken as given
    with pytest.raises(ValueError, match="jobs must be 0"):
        resolve_jobs(-1)


def _worker_pandas(path: str) -> tuple[bool, int, str]:
    """In a worker: whether decoding a real file's chunk imported pandas, its spans,
    and the Arrow type pyarrow gives a pandas categorical column once pandas is asked for."""
    (chunk,) = chunks.record_chunks("otlp_json", "", partial(Path(path).open, "rb"), 1, 1)
    spans = chunks.decode(chunk).spans.num_rows  # Arrow arrays built from Python lists
    had = "pandas" in sys.modules
    import pandas as pd
    import pyarrow as pa

    table = pa.Table.from_pandas(pd.DataFrame({"c": pd.Categorical(["x", "y", "x"])}))
    return had, spans, str(table.schema.field("c").type)


def test_workers_decode_without_importing_pandas() -> None:
    """A worker builds its Arrow arrays without pandas being imported (pyarrow's look
    for it cost 0.3 s and ~35 MB per worker), and pyarrow still reads pandas objects
    right in that worker when something asks for pandas itself."""
    if importlib.util.find_spec("pandas") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pandas (the spark extra) is missing in CI")
        pytest.skip("pandas is not installed: nothing for the worker to avoid")
    path = str(OTEL / "genai.jsonl")
    with Workers(2, start_inline=False) as w:
        results = list(w.map(_worker_pandas, [path, path]))
    for had, spans, typ in results:
        assert not had
        assert spans > 0
        assert typ == "dictionary<values=string, indices=int8, ordered=0>"


def _pid(i: int) -> tuple[int, int]:
    return i, os.getpid()


def test_items_are_mapped_here_until_the_workers_are_up() -> None:
    """While the pool starts (0.3 s), ``map`` decodes in this process instead of waiting,
    then hands the rest to the workers; the results stay in item order either way."""
    me = os.getpid()
    with Workers(2) as w:

        def items() -> Iterator[int]:
            yield 0  # taken while the pool starts
            while w._warming():
                time.sleep(0.005)
            yield from range(1, 50)  # the item asked for next is still taken here

        got = list(w.map(_pid, items()))
    assert [i for i, _ in got] == list(range(50))
    pids = [p for _, p in got]
    assert pids[0] == me and me not in pids[2:]
    with Workers(2, start_inline=False) as w:
        assert me not in {p for _, p in w.map(_pid, range(4))}


def test_trace_chunks_never_split_a_trace() -> None:
    """Pass 2 hands whole traces to ``events``, also when a trace spans several batches."""
    import pyarrow as pa

    keys = ["a"] * 3 + ["b"] * 9 + ["c"] + ["d"] * 4
    batches = [
        pa.record_batch({"k": keys[i : i + 4], "i": list(range(i, min(i + 4, len(keys))))})
        for i in range(0, len(keys), 4)
    ]
    for rows in (1, 2, 5, 100):
        tables = list(chunks.trace_chunks(iter(batches), rows, key="k"))
        assert [x for t in tables for x in t.column("i").to_pylist()] == list(range(len(keys)))
        seen: set[str] = set()
        for t in tables:
            ks = set(t.column("k").to_pylist())
            assert not ks & seen, (rows, ks, seen)  # a key in two tables: a split trace
            seen |= ks


_PRESTART = """
import os, sys
from multiprocessing import forkserver
from sponsio_audit.ingest.workers import Workers, prestart

def parent(_item):
    return os.getppid()

if __name__ == "__main__":
    prestart(1)  # one job: no worker will run, so no process is started
    assert forkserver._forkserver._forkserver_pid is None, "prestart(1) started a forkserver"
    prestart(2)
    server = forkserver._forkserver._forkserver_pid
    assert server is not None, "prestart(2) started no forkserver"
    with Workers(2, start_inline=False) as w:
        parents = set(w.map(parent, range(8)))
    assert parents == {server}, (parents, server)
    print("ok")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="forkserver start method: Linux here")
def test_prestart_starts_the_forkserver_the_workers_come_from(tmp_path: Path) -> None:
    """``scan --jobs 2`` starts the workers' forkserver before reading its configuration
    (``workers.prestart``), so its 0.3 s start overlaps the command's imports; the workers
    must then fork from that server, and a one-job scan must not start one at all."""
    import subprocess

    script = tmp_path / "prestart.py"
    script.write_text(_PRESTART)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
