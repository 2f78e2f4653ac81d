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
record 0 stands for the whole file (empty, unrecognised, logs/metrics, unreadable,
not a regular file). A file whose sha256 is already in ``files`` is not read again:
it is listed in ``files`` with format ``duplicate`` and in ``skipped`` (record 0)
naming the earlier file. Only regular files are opened: a FIFO, device or socket
(also behind a symlink) would block or never end, so it is listed and skipped
unopened. Reads are bounded by ``Limits`` (``limits.py``); a bound hit is listed
with its name.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sponsio_audit.ingest import attach, chunks, direct
from sponsio_audit.ingest.conventions import FACT_FIELDS
from sponsio_audit.ingest.limits import DEFAULT, LimitExceeded, Limits
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
    logs: Buffer
    traces: Buffer
    workers: Workers
    records: int = 0
    skipped_n: int = 0
    span_n: int = 0
    direct_traces: int = 0
    dup: int = 0
    shas: dict[str, str] = field(default_factory=dict)  # sha256 -> path of the first file
    pos: int = 0
    limits: Limits = DEFAULT

    def take(self, d: chunks.Decoded, file_id: int) -> int:
        """Buffer a decoded chunk of the current file (positions go on from ``pos``).

        Returns the number of records of the chunk that were skipped.
        """
        for no, reason in d.skipped:
            self.skipped.add((file_id, no, reason))
        self.spans.add_batch(d.spans)
        if d.logs is not None:
            self.logs.add_batch(d.logs)
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


def _records(fmt: str, layout: str, open_: Any, limits: Limits) -> Iterator[tuple[int, Any]]:
    """Parsed records of a file of events (session log, native, transcript) or a JSON document."""
    if layout == "lines":
        yield from json_lines(open_, limits)
    else:
        try:
            yield 1, read_document(open_, limits)
        except BadRecord as e:
            yield 1, e


def event_records(fmt: str, layout: str, open_: Any, limits: Limits) -> Iterator[tuple[int, Any]]:
    """Public name of the record reader of event files (the Spark tasks read them with it)."""
    return _records(fmt, layout, open_, limits)


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def irregular(path: str) -> str | None:
    """Why ``path`` (symlinks followed) must not be opened, or None for a regular file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # the open that follows reports the error
    if stat.S_ISREG(mode):
        return None
    kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
    return f"not a regular file ({kind}); not read"


def duplicate_reason(earlier: str) -> str:
    """The skip reason of a file whose sha256 an earlier file already had."""
    return f"duplicate of {earlier} (same sha256), not read again"


def otlp_decoder(fmt: str) -> str:
    """The decoder of a sniffed OTLP format: a file sniffed as logs or metrics by its first
    line is OTLP/JSON, each record routed by its own signal (``chunks.decode``)."""
    return "otlp_json" if fmt in ("otlp_logs", "otlp_metrics") else fmt


def _unread(r: _Run, display: str, fmt: str, reason: str) -> None:
    """List a file that was not read at all as one skipped record 0."""
    file_id = r.next_file
    r.next_file += 1
    r.records += 1
    r.skipped_n += 1
    r.skipped.add((file_id, 0, reason))
    r.files.add((file_id, display, fmt, None, None, 1, 1))


def _file(r: _Run, path: str, display: str) -> None:
    why = irregular(path)
    if why is not None:
        _unread(r, display, "not_regular", why)
        return
    try:
        sha, size = _hash(path)
    except OSError as e:
        _unread(r, display, "unreadable", f"cannot read file: {e.strerror or e}")
        return
    earlier = r.shas.get(sha) or r.store.path_with_sha256(sha)
    file_id = r.next_file
    r.next_file += 1
    if earlier is not None:  # listed, not read again: its records are those of the earlier file
        r.dup += 1
        r.records += 1
        r.skipped_n += 1
        r.skipped.add((file_id, 0, duplicate_reason(earlier)))
        r.files.add((file_id, display, "duplicate", size, sha, 1, 1))
        return
    r.shas[sha] = display
    r.pos = 0

    def open_() -> IO[bytes]:
        return decompressed(open(path, "rb"), r.limits)[0]

    n = bad = 0
    fmt = "unknown"
    try:
        fmt, layout = sniff(open_, r.limits)
        if fmt in ("empty", "unknown"):
            reason = {"empty": "empty file"}.get(
                fmt, "unrecognised format (not OTLP, Sponsio log or transcript)"
            )
            n, bad = 1, 1
            r.skipped.add((file_id, 0, reason))
        elif fmt in ("session_log", "native", "transcript") or layout == "document":
            recs = _records(fmt, layout, open_, r.limits)
            n, bad, fmt = direct.load(r, file_id, sha, fmt, layout, recs)
        else:
            # each line of a JSON file is routed by its own signal (chunks.decode): a
            # file whose first line is logs or metrics keeps that name and its traces
            decoder = otlp_decoder(fmt)
            n, bad = _otlp(r, decoder, layout, open_, file_id)
    except Exception as e:  # stream-level failure (corrupt compression, I/O): keep what was read
        n, bad = n + 1, bad + 1
        _broken_stream(r, file_id, n, e)
    r.records += n
    r.skipped_n += bad
    r.files.add((file_id, display, fmt, size, sha, n, bad))


def _otlp(r: _Run, fmt: str, layout: str, open_: Any, file_id: int) -> tuple[int, int]:
    """Load an OTLP file's records chunk by chunk; returns (records, skipped records)."""
    n = bad = 0
    todo = chunks.record_chunks(fmt, layout, open_, file_id, r.run, r.limits)
    try:
        for d in r.workers.map(chunks.decode, todo):
            n += d.records
            bad += r.take(d, file_id)
    except Exception as e:  # the stream broke: the chunks read before it are loaded
        n, bad = n + 1, bad + 1
        _broken_stream(r, file_id, n, e)
    return n, bad


def _broken_stream(r: _Run, file_id: int, record: int, e: Exception) -> None:
    """List a stream-level failure (corrupt compression, I/O, a bound) as the file's next record."""
    if isinstance(e, LimitExceeded):
        r.skipped.add((file_id, record, str(e)))
        return
    r.skipped.add((file_id, record, f"unreadable stream: {type(e).__name__}: {e}"[:300]))


def _cap_traces(r: _Run) -> int:
    """Skip the records that add spans to a trace past ``limits.spans_per_trace``.

    Counted in the store (any number of traces); a trace over the bound keeps its
    first spans in (file, position) order, and every record holding a later one is
    removed and listed. Returns the number of records skipped.
    """
    con, cap = r.store.con, r.limits.spans_per_trace
    bad = con.execute(
        """WITH big AS (SELECT trace_id FROM span_facts GROUP BY trace_id HAVING count(*) > $cap),
        ranked AS (SELECT f.file_id, f.record, f.run, row_number() OVER (
            PARTITION BY f.trace_id ORDER BY f.file_id, f.pos) AS n
            FROM span_facts f JOIN big USING (trace_id))
        SELECT DISTINCT file_id, record FROM ranked WHERE n > $cap AND run = $run
        ORDER BY 1, 2""",
        {"cap": cap, "run": r.run},
    ).fetchall()
    if not bad:
        return 0
    why = str(LimitExceeded("spans_per_trace", cap, "trace with more spans"))
    for file_id, record in bad:
        for table in ("spans", "span_facts"):
            con.execute(f"DELETE FROM {table} WHERE file_id = ? AND record = ?", [file_id, record])
        con.execute("INSERT INTO skipped VALUES (?, ?, ?)", [file_id, record, why])
        con.execute("UPDATE files SET skipped = skipped + 1 WHERE file_id = ?", [file_id])
    r.span_n = int(
        con.execute("SELECT count(*) FROM span_facts WHERE run = ?", [r.run]).fetchall()[0][0]
    )
    return len(bad)


def _span_events(r: _Run, group_by: str, batch_rows: int) -> int:
    """Recompute events of every trace (or conversation) that received spans or GenAI log
    records in this run; a span's log records fill what the span did not record."""
    con = r.store.con
    runs = (
        "SELECT trace_id FROM span_facts WHERE run = $run "
        "UNION SELECT trace_id FROM span_logs WHERE run = $run"
    )
    if group_by == "conversation":
        key_sql = """WITH g AS (SELECT trace_id, coalesce(arg_min(conversation,
                       file_id * 1000000000000 + pos) FILTER (WHERE conversation IS NOT NULL),
                       trace_id) AS gkey FROM span_facts GROUP BY trace_id)"""
    else:
        key_sql = (
            "WITH g AS (SELECT DISTINCT trace_id, trace_id AS gkey "
            f"FROM span_facts WHERE trace_id IN ({runs}))"
        )
    touched = f"{key_sql}, t AS (SELECT DISTINCT gkey FROM g WHERE trace_id IN ({runs}))"
    params = {"run": r.run}
    for table in ("events", "traces"):
        con.execute(f"{touched} DELETE FROM {table} WHERE trace_id IN (SELECT gkey FROM t)", params)
    con.execute(
        f"{touched} DELETE FROM decisions WHERE trace_id IN (SELECT gkey FROM t) "
        "AND file_id IN (SELECT DISTINCT file_id FROM span_facts)",
        params,
    )
    r.store.commit()  # attach reads span_logs through a cursor: it sees committed rows only
    logs = attach.log_facts_table(
        con, f"{touched} SELECT trace_id FROM g WHERE gkey IN (SELECT gkey FROM t)", params
    )
    con.register("_incoming_log_facts", logs)
    con.execute(f"CREATE OR REPLACE TABLE {attach.VIEW} AS SELECT * FROM _incoming_log_facts")
    con.unregister("_incoming_log_facts")
    r.store.commit()  # the cursor below is a connection of its own: it reads committed rows
    base = ", ".join(f"f.{c}" for c in ROW_FIELDS[: ROW_FIELDS.index(FACT_FIELDS[0])])
    cols = f"{base}, {attach.fill_sql('f', 'lf')}"
    cur = con.cursor()
    try:
        res = cur.sql(
            f"{touched} SELECT g.gkey, {cols} FROM span_facts f JOIN g USING (trace_id) "
            f"LEFT JOIN {attach.VIEW} lf ON lf.trace_id = f.trace_id AND lf.span_id = f.span_id "
            "WHERE g.gkey IN (SELECT gkey FROM t) ORDER BY g.gkey, f.file_id, f.pos",
            params=params,
        )
        traces = 0
        if res is not None:
            batches = chunks.trace_chunks(res.to_arrow_reader(batch_rows))
            for t in r.workers.map(chunks.events, batches):
                traces += t.traces
                r.events.add_batch(t.events)
                r.decisions.add_batch(t.decisions)
                if t.counts is not None:
                    r.traces.add_batch(t.counts)
    finally:
        cur.close()
        con.execute(f"DROP TABLE IF EXISTS {attach.VIEW}")
    return traces


def ingest(
    paths: list[str | Path],
    store: Store,
    *,
    group_by: str = "trace",
    batch_rows: int = 50_000,
    jobs: int = 1,
    limits: Limits = DEFAULT,
    progress: Callable[[str, int], None] | None = None,
) -> IngestSummary:
    """Load every file under ``paths`` into ``store``; see the module doc for the passes.

    ``jobs`` worker processes decode (1: none, all in this process; 0: auto, one
    per CPU when the inputs add up to ``AUTO_BYTES`` or more). The tables do not
    depend on ``jobs``. ``limits`` bounds what one file or record may cost.
    ``progress(path, spans so far)`` is called after each file.
    """
    if group_by not in ("trace", "conversation"):
        raise ValueError("group_by must be 'trace' or 'conversation'")
    bufs = {
        t: Buffer(store, t, batch_rows)
        for t in (
            "spans",
            "span_facts",
            "events",
            "decisions",
            "skipped",
            "files",
            "span_logs",
            "traces",
        )
    }
    if jobs == 0:
        jobs = resolve_jobs(0, _input_bytes(paths))
    with Workers(jobs) as workers, store.loading():
        return _ingest(paths, store, group_by, bufs, workers, limits, progress)


def _ingest(
    paths: list[str | Path],
    store: Store,
    group_by: str,
    bufs: dict[str, Buffer],
    workers: Workers,
    limits: Limits,
    progress: Callable[[str, int], None] | None = None,
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
        bufs["span_logs"],
        bufs["traces"],
        workers,
        limits=limits,
    )
    for path in walk(paths):
        if path == "-":
            with tempfile.NamedTemporaryFile(prefix="sponsio-stdin-", delete=False) as tmp:
                shutil.copyfileobj(sys.stdin.buffer, tmp)
            try:
                _file(r, tmp.name, "-")
            finally:
                os.unlink(tmp.name)
        else:
            _file(r, path, path)
        if progress is not None:
            progress(path, r.span_n)
    for b in bufs.values():
        b.flush()
    r.skipped_n += _cap_traces(r)
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
