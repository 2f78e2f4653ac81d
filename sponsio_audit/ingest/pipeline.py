"""``ingest``: files → sniff → decode → ``spans``/``span_facts`` → per-trace ``events``.

Two passes, both bounded in memory by the batch size:

1. each file is sniffed; an OTLP file's records are decoded in chunks
   (``chunks.decode``; an uncompressed JSON-lines file as line ranges its
   worker reads itself, ``line_ranges``); spans go to ``spans`` and their
   convention facts to ``span_facts`` in Arrow batches, and (grouping by trace)
   the same worker call computes the events of every trace of the chunk
   (``inchunk``), staged until the run ends (``staging``); formats that are
   events already (session logs, native traces, transcripts) are turned into
   events per file / per run and written directly;
2. the staged traces that lay wholly in their chunk are kept; every other
   trace touched by this run is read back from ``span_facts`` ordered by
   (trace, file, position) and its events computed (``readback``); a trace's
   earlier events are replaced, so a later file adding spans to a trace is
   handled. The staged rows are then written ordered by trace, as pass 2
   alone would write them.

With ``jobs > 1`` the chunk work of both passes runs in worker processes
(``Workers``) while this process hashes files and writes the store; results are
taken in order, so the tables are the same whatever ``jobs`` is.

Every record is loaded or listed in ``skipped`` with its file and record number;
record 0 stands for the whole file (empty, unrecognised, logs/metrics, unreadable,
not a regular file). A file whose sha256 is already in ``files`` is not read again:
it is listed in ``files`` with format ``duplicate`` and in ``skipped`` (record 0)
naming the earlier file. A file is hashed before it is read, except a large one
whose size no stored or earlier file has (so no duplicate): it is hashed while it is
read (``_hashed``), on a thread in one process; with workers, its line ranges go to
them as the hashing read finds them (``files.LineHash``). Every read after the file was
measured checks that its path still names that file (``line_ranges.Replaced``: a log
rotated by renaming is listed, never read as the new file). Only regular files are opened:
a FIFO, device or socket (also behind a symlink) would block or never end, so it
is listed and skipped unopened. Reads are bounded by ``Limits`` (``limits.py``);
a bound hit is listed with its name.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

import pyarrow as pa

from sponsio_audit.ingest import chunks, direct, inchunk, readback
from sponsio_audit.ingest.files import (
    HASH_THREAD_BYTES,
    LineHash,
    duplicate_reason,
    event_records,
    file_hash,
    hash_beside,
    input_bytes,
    irregular,
    is_own,
    otlp_decoder,
    own_files_of,
    prefix,
    walk,
)
from sponsio_audit.ingest.layers import decompressed
from sponsio_audit.ingest.limits import DEFAULT, Limits, stream_failure
from sponsio_audit.ingest.line_ranges import Ident, LineIndex, ident
from sponsio_audit.ingest.sniff import NOT_TRACES, sniff
from sponsio_audit.ingest.staging import Stage
from sponsio_audit.ingest.store import Buffer, Store
from sponsio_audit.ingest.workers import Workers, resolve_jobs


class _Sha(Protocol):
    """A sha256 on its way (``hash_beside``'s future, a ``LineHash``)."""

    def result(self) -> str: ...


_Index = LineIndex | LineHash
"""Where a file's line ranges come from: an index of the whole file, or its read."""


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
    sizes: set[int] = field(default_factory=set)  # sizes of this run's files (duplicates' too)
    pos: int = 0
    limits: Limits = DEFAULT
    stage: Stage | None = None  # pass-1 events (group_by trace)
    fresh: bool = False  # the store held no span and no GenAI log record when the run began
    eventless: bool = False  # the store held no event when the run began
    on_events: Callable[[pa.Table], None] | None = None  # ``ingest``'s
    own: tuple[frozenset[str], tuple[str, ...]] = (frozenset(), ())  # ``files.own_files_of``
    unstaged: int = 0  # spans taken without their traces staged (a JSON document's)

    def take(self, d: chunks.Decoded, file_id: int, staged: bool = False) -> int:
        """Buffer a decoded chunk of the current file (positions go on from ``pos``);
        ``staged``: its traces' pass-1 events go to ``stage``.

        Returns the number of records of the chunk that were skipped.
        """
        if not staged:
            self.unstaged += d.facts.num_rows
        for no, reason in d.skipped:
            self.skipped.add((file_id, no, reason))
        if d.spans.num_rows:  # none when the store writes no spans rows (``Store.spans``)
            self.spans.add_batch(d.spans)
        if d.logs is not None:
            self.logs.add_batch(d.logs)
        self.facts.add_batch(chunks.shift_pos(d.facts, self.pos))
        self.pos += d.facts.num_rows
        self.span_n += d.facts.num_rows
        return len(d.skipped)


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
        same, later, (sha, size, index) = _hashed(r, path)
    except OSError as e:
        _unread(r, display, "unreadable", f"cannot read file: {e.strerror or e}")
        return
    r.sizes.add(size)
    # an empty file is listed as empty, never as a duplicate of another empty file
    earlier = None if sha is None or not size else r.shas.get(sha) or r.store.path_with_sha256(sha)
    file_id = r.next_file
    r.next_file += 1
    if earlier is not None:  # listed, not read again: its records are those of the earlier file
        r.dup += 1
        r.records += 1
        r.skipped_n += 1
        r.skipped.add((file_id, 0, duplicate_reason(earlier)))
        r.files.add((file_id, display, "duplicate", size, sha, 1, 1))
        return
    if sha is not None:
        r.shas[sha] = display
    r.pos = 0

    def open_() -> IO[bytes]:  # as far as it was hashed (a live log grows meanwhile)
        return decompressed(prefix(path, size, same), r.limits)[0]

    n = bad = 0
    fmt = "unknown"
    try:
        fmt, layout = sniff(open_, r.limits)
        if fmt in NOT_TRACES:
            n, bad = 1, 1
            r.skipped.add((file_id, 0, NOT_TRACES[fmt]))
        elif fmt in ("session_log", "native", "transcript") or layout == "document":
            recs = event_records(fmt, layout, open_, r.limits)
            whole = sha if later is None else later.result()  # its trace ids name it
            assert whole is not None  # file_hash gives one, or the thread does
            n, bad, fmt = direct.load(r, file_id, whole, fmt, layout, recs)
        else:
            # each line of a JSON file is routed by its own signal (chunks.decode): a
            # file whose first line is logs or metrics keeps that name and its traces
            decoder = otlp_decoder(fmt)
            ranged = decoder == "otlp_json" and layout == "lines"
            ranged = ranged and index is not None and not index.compressed()
            later = _streamed(later, path, size, same, ranged)
            todo: Iterable[chunks.RecordChunk | inchunk.RangeChunk]
            if ranged and index is not None:
                todo = _ranges(r, os.path.abspath(path), same, index, file_id)
            else:
                todo = chunks.record_chunks(
                    decoder, layout, open_, file_id, r.run, r.limits, r.store.raw_json,
                    spans=r.store.spans,
                )  # fmt: skip
            n, bad = _otlp(r, todo, file_id)
    except Exception as e:  # stream-level failure (corrupt compression, I/O): keep what was read
        n, bad = n + 1, bad + 1
        _broken_stream(r, file_id, n, e)
    if later is not None:
        try:
            sha = later.result()
            r.shas[sha] = display
        except OSError as e:  # read, but not to the end a second time: listed as a record
            n, bad = n + 1, bad + 1
            r.skipped.add((file_id, n, f"cannot read file for its sha256: {e.strerror or e}"))
        finally:
            if isinstance(later, LineHash):
                later.close()
    r.records += n
    r.skipped_n += bad
    r.files.add((file_id, display, fmt, size, sha, n, bad))


def _hashed(r: _Run, path: str) -> tuple[Ident, _Sha | None, tuple[str | None, int, _Index | None]]:
    """Which file ``path`` names now (every later open checks it is still that one: a log
    rotated by renaming is ``line_ranges.Replaced``), and ``file_hash`` of the file, or,
    for a large file no stored or earlier file has the size of (so it cannot be a
    duplicate), its sha256 computed while the file is read: in one process on a thread
    (``hash_beside``; no line index: this process reads its records itself, as fast as
    from ranges); with workers, which read ranges, by a ``LineHash`` whose ranges go to
    them as the read finds them (``_streamed``)."""
    st = os.stat(path)
    same, size = ident(st), st.st_size
    if size >= HASH_THREAD_BYTES and size not in r.sizes and not r.store.has_bytes(size):
        if r.workers.jobs == 1:
            return same, hash_beside(path, size, same), (None, size, None)
        streamed = LineHash(path, size, same)  # opened now: an unreadable file is refused here
        return same, streamed, (None, size, streamed)
    return same, None, file_hash(path, same)


def _streamed(later: _Sha | None, path: str, size: int, same: Ident, ranged: bool) -> _Sha | None:
    """The file's hash to wait for: a ``LineHash`` whose ranges are not read (a file
    that is not uncompressed JSON lines) is closed, and the file hashed on a thread
    while it is read, as in one process."""
    if isinstance(later, LineHash) and not ranged:
        later.close()
        return hash_beside(path, size, same)
    return later


def _ranges(
    r: _Run, path: str, same: Ident, index: _Index, file_id: int
) -> Iterator[inchunk.RangeChunk]:
    """The chunks of an uncompressed JSON-lines file as line ranges its workers read."""
    template = chunks.RecordChunk(
        "otlp_json", file_id, r.run, [], r.limits, raw_json=r.store.raw_json, spans=r.store.spans
    )
    for offset, length, first in index.ranges():
        yield inchunk.RangeChunk(path, offset, length, first, template, same)


def _otlp(
    r: _Run, todo: Iterable[chunks.RecordChunk | inchunk.RangeChunk], file_id: int
) -> tuple[int, int]:
    """Load an OTLP file's records chunk by chunk; returns (records, skipped records)."""
    n = bad = 0
    try:
        if r.stage is None:
            for d in r.workers.map(inchunk.decode_chunk, todo, lost=inchunk.lost_chunk):
                n += d.records
                bad += r.take(d, file_id)
        else:
            stage = r.stage
            for d, t in r.workers.map(inchunk.decode_traced, todo, lost=inchunk.lost_traced):
                n += d.records
                bad += r.take(d, file_id, staged=True)
                stage.add(t)
    except Exception as e:  # the stream broke: the chunks read before it are loaded
        n, bad = n + 1, bad + 1
        _broken_stream(r, file_id, n, e)
    return n, bad


def _broken_stream(r: _Run, file_id: int, record: int, e: Exception) -> None:
    """List a stream-level failure (corrupt compression, I/O, a bound) as the file's next record."""
    r.skipped.add((file_id, record, stream_failure(e)))


def ingest(
    paths: list[str | Path],
    store: Store,
    *,
    group_by: str = "trace",
    batch_rows: int = 50_000,
    jobs: int = 1,
    limits: Limits = DEFAULT,
    progress: Callable[[str, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
    on_events: Callable[[pa.Table], None] | None = None,
    own_files: Iterable[str | Path] = (),
) -> IngestSummary:
    """Load every file under ``paths`` into ``store``; see the module doc for the passes.

    ``jobs`` worker processes decode (1: none, all in this process; 0: auto, one
    per CPU when the inputs add up to ``AUTO_BYTES`` or more). The tables do not
    depend on ``jobs``. ``limits`` bounds what one file or record may cost.
    ``progress(path, spans so far)`` is called after each file; ``warn(line)`` when a worker
    process died and its chunks were read again (``Workers``). ``on_events(table)`` is told
    the whole ``events`` table, in its stored order, when the run writes every row of it from
    memory (into a store that held no event): a caller may evaluate those rows once the run
    returns, instead of reading them back (not while DuckDB inserts those same Arrow buffers:
    evaluating beside the insert gained 45 ms of a 2.6 s scan, within noise). The store's
    database file, its write-ahead log and spill folder, and those of ``own_files`` (a scan's
    other database: the one a replacing scan's part replaces) are never read, when ``paths``
    hold them.
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
        jobs = resolve_jobs(0, input_bytes(paths))
    with Workers(jobs, warn=warn) as workers, store.loading():
        return _ingest(
            paths, store, group_by, bufs, workers, limits, progress, on_events, own_files
        )


def _ingest(
    paths: list[str | Path],
    store: Store,
    group_by: str,
    bufs: dict[str, Buffer],
    workers: Workers,
    limits: Limits,
    progress: Callable[[str, int], None] | None = None,
    on_events: Callable[[pa.Table], None] | None = None,
    own_files: Iterable[str | Path] = (),
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
        stage=Stage.open(store, bufs["events"].batch_rows) if group_by == "trace" else None,
        fresh=not store.count("span_facts") and not store.count("span_logs"),
        eventless=not store.count("events"),
        on_events=on_events,
        own=own_files_of([p for p in (store.path, *own_files) if p is not None]),
    )
    try:
        return _passes(r, paths, group_by, bufs, progress)
    finally:
        if r.stage is not None:
            r.stage.drop()


def _passes(
    r: _Run,
    paths: list[str | Path],
    group_by: str,
    bufs: dict[str, Buffer],
    progress: Callable[[str, int], None] | None,
) -> IngestSummary:
    """Pass 1 over every file, then pass 2 and the staged events (see the module doc)."""
    files, folders = r.own
    for path in walk(paths):
        if path != "-" and is_own(path, files, folders):
            continue  # the store's own database beside the inputs: not a trace file
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
    if r.stage is not None:
        r.stage.presort()
    sole = r.stage is not None and r.fresh and not r.unstaged and not r.logs.total
    capped = [] if sole and _within(r) else readback.cap_traces(r.store, r.run, r.limits)
    if capped:
        r.skipped_n += len(capped)
        r.span_n = int(
            r.store.con.execute(
                "SELECT count(*) FROM span_facts WHERE run = ?", [r.run]
            ).fetchall()[0][0]
        )
    stage = r.stage
    write = _writer(r)
    traces = readback.span_events(
        r.store,
        r.run,
        group_by,
        bufs["events"].batch_rows,
        r.workers.map,
        write,
        stage,
        sole=sole and not capped,
    )
    for b in bufs.values():
        b.flush()
    alone = r.eventless and not bufs["events"].total  # the stage writes every event
    staged = stage.publish(r.on_events if alone else None) if stage is not None else 0
    return IngestSummary(
        files=bufs["files"].total,
        records=r.records,
        spans=r.span_n,
        events=bufs["events"].total + staged,
        skipped=r.skipped_n,
        traces=traces + r.direct_traces,
        duplicates=r.dup,
    )


def _within(r: _Run) -> bool:
    """Whether no trace of a run whose every span with a trace id is staged (``sole``) can
    be past ``limits.spans_per_trace``: its staged span counts say so, without reading
    ``span_facts`` (the spans without a trace id counted as one trace, to be safe)."""
    assert r.stage is not None
    spread = r.stage.spread()
    cap = r.limits.spans_per_trace
    return spread is not None and spread[0] <= cap and r.span_n - spread[1] <= cap


def _writer(r: _Run) -> Callable[[chunks.Traced], None]:
    """Where pass 2's events go: the stage when it holds pass-1 traces (``publish`` orders
    them all by trace), else straight into the run's buffers."""
    stage = r.stage

    def write(t: chunks.Traced) -> None:
        if stage is not None and stage.kept:
            stage.add(t)
            return
        r.events.add_batch(t.events)
        r.decisions.add_batch(t.decisions)
        if t.counts is not None:
            r.traces.add_batch(t.counts)

    return write
