"""``ingest``: files → sniff → decode → ``spans``/``span_facts`` → per-trace ``events``.

Two passes, both bounded in memory by the batch size:

1. each file is sniffed; an OTLP file's records are decoded in chunks
   (``chunks.decode``); spans go to ``spans`` and their convention facts to
   ``span_facts`` in Arrow batches; formats that are events already (session
   logs, native traces, transcripts) are turned into events per file / per run
   and written directly;
2. the traces touched by this run are read back from ``span_facts`` ordered by
   (trace, file, position) as a stream of record batches, cut at trace
   boundaries, and each trace's events are computed (``chunks.events``) and
   written; a trace's earlier events are replaced, so a later file adding spans
   to a trace is handled.

With ``jobs > 1`` the chunk work of both passes runs in worker processes
(``Workers``) while this process reads files and writes the store; results are
taken in order, so the tables are the same whatever ``jobs`` is.

Every record is loaded or listed in ``skipped`` with its file and record number;
record 0 stands for the whole file (empty, unrecognised, logs/metrics, unreadable).
A file whose sha256 is already in ``files`` is not read again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sponsio_audit.ingest import chunks, direct
from sponsio_audit.ingest.sniff import BadRecord, decompressed, json_lines, read_document, sniff
from sponsio_audit.ingest.store import Buffer, Store
from sponsio_audit.ingest.trace_events import ROW_FIELDS
from sponsio_audit.ingest.workers import AUTO_BYTES, Workers, resolve_jobs


@dataclass(frozen=True)
class IngestSummary:
    """Counts of one ``ingest`` call (duplicates: files skipped as already ingested)."""

    files: int
    records: int
    spans: int
    events: int
    skipped: int
    traces: int
    duplicates: int = 0


def walk(paths: list[str | Path]) -> Iterator[str]:
    """Files named by ``paths``: directories recursively in sorted order, ``-`` for stdin."""
    for p in paths:
        s = str(p)
        if s != "-" and os.path.isdir(s):
            for root, dirs, files in os.walk(s):
                dirs.sort()
                for name in sorted(files):
                    yield os.path.join(root, name)
        else:
            yield s


def _input_bytes(paths: list[str | Path]) -> int | None:
    """Total size of the files under ``paths`` (None with stdin), stopping at ``AUTO_BYTES``."""
    total = 0
    for p in walk(paths):
        if p == "-":
            return None
        try:
            total += os.path.getsize(p)
        except OSError:
            continue
        if total >= AUTO_BYTES:
            break
    return total


@dataclass
class _Run:
    """Mutable state of one ingest call: buffers, counters, file ids."""

    store: Store
    run: int
    next_file: int
    spans: Buffer
    facts: Buffer
    events: Buffer
    decisions: Buffer
    skipped: Buffer
    files: Buffer
    workers: Workers
    records: int = 0
    skipped_n: int = 0
    span_n: int = 0
    direct_traces: int = 0
    dup: int = 0
    shas: set[str] = field(default_factory=set)
    pos: int = 0

    def take(self, d: chunks.Decoded, file_id: int) -> int:
        """Buffer a decoded chunk of the current file (positions go on from ``pos``).

        Returns the number of records of the chunk that were skipped.
        """
        for no, reason in d.skipped:
            self.skipped.add((file_id, no, reason))
        self.spans.add_batch(d.spans)
        self.facts.add_batch(chunks.shift_pos(d.facts, self.pos))
        self.pos += d.facts.num_rows
        self.span_n += d.facts.num_rows
        return len(d.skipped)


def _hash(path: str) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            n += len(chunk)
    return h.hexdigest(), n


def _records(fmt: str, layout: str, open_: Any) -> Iterator[tuple[int, Any]]:
    """Parsed records of a file of events (session log, native, transcript) or a JSON document."""
    if layout == "lines":
        yield from json_lines(open_)
    else:
        try:
            yield 1, read_document(open_)
        except BadRecord as e:
            yield 1, e


def _file(r: _Run, path: str, display: str) -> None:
    try:
        sha, size = _hash(path)
    except OSError as e:
        file_id = r.next_file
        r.next_file += 1
        r.records += 1
        r.skipped_n += 1
        r.skipped.add((file_id, 0, f"cannot read file: {e.strerror or e}"))
        r.files.add((file_id, display, "unreadable", None, None, 1, 1))
        return
    if sha in r.shas or r.store.has_sha256(sha):
        r.dup += 1
        return
    r.shas.add(sha)
    file_id = r.next_file
    r.next_file += 1
    r.pos = 0

    def open_() -> IO[bytes]:
        return decompressed(open(path, "rb"))[0]

    n = bad = 0
    fmt = "unknown"
    try:
        fmt, layout = sniff(open_)
        if fmt in ("empty", "unknown", "otlp_logs", "otlp_metrics"):
            reason = {
                "empty": "empty file",
                "otlp_logs": "OTLP logs, not traces",
                "otlp_metrics": "OTLP metrics, not traces",
            }.get(fmt, "unrecognised format (not OTLP, Sponsio log or transcript)")
            n, bad = 1, 1
            r.skipped.add((file_id, 0, reason))
        elif fmt in ("session_log", "native", "transcript") or layout == "document":
            n, bad, fmt = direct.load(r, file_id, sha, fmt, layout, _records(fmt, layout, open_))
        else:
            n, bad = _otlp(r, fmt, layout, open_, file_id)
    except Exception as e:  # stream-level failure (corrupt compression, I/O): keep what was read
        n, bad = n + 1, bad + 1
        _broken_stream(r, file_id, n, e)
    r.records += n
    r.skipped_n += bad
    r.files.add((file_id, display, fmt, size, sha, n, bad))


def _otlp(r: _Run, fmt: str, layout: str, open_: Any, file_id: int) -> tuple[int, int]:
    """Load an OTLP file's records chunk by chunk; returns (records, skipped records)."""
    n = bad = 0
    todo = chunks.record_chunks(fmt, layout, open_, file_id, r.run)
    try:
        for d in r.workers.map(chunks.decode, todo):
            n += d.records
            bad += r.take(d, file_id)
    except Exception as e:  # the stream broke: the chunks read before it are loaded
        n, bad = n + 1, bad + 1
        _broken_stream(r, file_id, n, e)
    return n, bad


def _broken_stream(r: _Run, file_id: int, record: int, e: Exception) -> None:
    """List a stream-level failure (corrupt compression, I/O) as the file's next record."""
    r.skipped.add((file_id, record, f"unreadable stream: {type(e).__name__}: {e}"[:300]))


def _span_events(r: _Run, group_by: str, batch_rows: int) -> int:
    """Recompute events of every trace (or conversation) that received spans in this run."""
    con = r.store.con
    cols = ", ".join(f"f.{c}" for c in ROW_FIELDS)
    if group_by == "conversation":
        key_sql = """WITH g AS (SELECT trace_id, coalesce(arg_min(conversation,
                       file_id * 1000000000000 + pos) FILTER (WHERE conversation IS NOT NULL),
                       trace_id) AS gkey FROM span_facts GROUP BY trace_id)"""
    else:
        key_sql = (
            "WITH g AS (SELECT DISTINCT trace_id, trace_id AS gkey "
            "FROM span_facts WHERE run = $run)"
        )
    touched = (
        f"{key_sql}, t AS (SELECT DISTINCT g.gkey FROM g "
        "JOIN span_facts s USING (trace_id) WHERE s.run = $run)"
    )
    con.execute(
        f"{touched} DELETE FROM events WHERE trace_id IN (SELECT gkey FROM t)", {"run": r.run}
    )
    con.execute(
        f"{touched} DELETE FROM decisions WHERE trace_id IN (SELECT gkey FROM t) "
        "AND file_id IN (SELECT DISTINCT file_id FROM span_facts)",
        {"run": r.run},
    )
    cur = con.cursor()
    res = cur.sql(
        f"{touched} SELECT g.gkey, {cols} FROM span_facts f JOIN g USING (trace_id) "
        "WHERE g.gkey IN (SELECT gkey FROM t) ORDER BY g.gkey, f.file_id, f.pos",
        params={"run": r.run},
    )
    if res is None:
        return 0
    traces = 0
    for t in r.workers.map(chunks.events, chunks.trace_chunks(res.to_arrow_reader(batch_rows))):
        traces += t.traces
        r.events.add_batch(t.events)
        r.decisions.add_batch(t.decisions)
    cur.close()
    return traces


def ingest(
    paths: list[str | Path],
    store: Store,
    *,
    group_by: str = "trace",
    batch_rows: int = 50_000,
    jobs: int = 1,
) -> IngestSummary:
    """Load every file under ``paths`` into ``store``; see the module doc for the passes.

    ``jobs`` worker processes decode (1: none, all in this process; 0: auto, one
    per CPU when the inputs add up to ``AUTO_BYTES`` or more). The tables do not
    depend on ``jobs``.
    """
    if group_by not in ("trace", "conversation"):
        raise ValueError("group_by must be 'trace' or 'conversation'")
    bufs = {
        t: Buffer(store, t, batch_rows)
        for t in ("spans", "span_facts", "events", "decisions", "skipped", "files")
    }
    if jobs == 0:
        jobs = resolve_jobs(0, _input_bytes(paths))
    with Workers(jobs) as workers:
        return _ingest(paths, store, group_by, bufs, workers)


def _ingest(
    paths: list[str | Path], store: Store, group_by: str, bufs: dict[str, Buffer], workers: Workers
) -> IngestSummary:
    r = _Run(
        store,
        store.next_run(),
        store.next_file_id(),
        bufs["spans"],
        bufs["span_facts"],
        bufs["events"],
        bufs["decisions"],
        bufs["skipped"],
        bufs["files"],
        workers,
    )
    for path in walk(paths):
        if path == "-":
            with tempfile.NamedTemporaryFile(prefix="sponsio-stdin-", delete=False) as tmp:
                shutil.copyfileobj(sys.stdin.buffer, tmp)
            try:
                _file(r, tmp.name, "-")
            finally:
                os.unlink(tmp.name)
            continue
        _file(r, path, path)
    for b in bufs.values():
        b.flush()
    traces = _span_events(r, group_by, bufs["events"].batch_rows) + r.direct_traces
    for b in bufs.values():
        b.flush()
    return IngestSummary(
        files=bufs["files"].total,
        records=r.records,
        spans=r.span_n,
        events=bufs["events"].total,
        skipped=r.skipped_n,
        traces=traces,
        duplicates=r.dup,
    )
