"""``Stage``: pass-1 events held in temporary tables until the run knows which traces are whole.

A chunk's worker computes the events of every trace in the chunk
(``inchunk.decode_traced``); only at the end of the run is it known which of
those traces lie wholly in that chunk. ``settle`` keeps a trace's staged rows
when the trace was staged by one chunk only, the store holds no more of its
spans than that chunk had (none from another file, chunk, document or
earlier run, none removed by ``limits.spans_per_trace``) and no GenAI log
record names it; every other touched trace goes to pass 2, whose rows are
staged too. ``publish`` then writes the staged rows ordered by trace id, the
order pass 2 alone writes them in, so the tables are the same row for row
and in insertion order as when every trace goes through pass 2. The events held in
memory are sorted on a thread while ``settle`` and pass 2 run (``presort``), and that
sort is used only if they have not changed since.

The staged rows live in DuckDB temporary tables (spilled to disk past the
store's memory limit), so memory stays bounded whatever the corpus size;
the first ``HOLD_BYTES`` of events are held in memory instead, which spares
a small run's events a second write.
``LOCAL`` (the kept trace ids) is a plain table, dropped at the end, because
pass 2 reads it from other cursors, which do not see temporary tables.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.ingest.chunks import Traced
from sponsio_audit.ingest.store import Store
from sponsio_audit.threads import background

EVENTS, DECISIONS, TRACES, LOCAL = "_stage_events", "_stage_decisions", "_stage_traces", "_local"
"""Temporary tables of one run (names from this module only, never from input)."""

HOLD_BYTES = 64 << 20
"""Staged event bytes kept in memory before they go to ``EVENTS``: the events of a run
of up to about 250k spans are written once (from memory, ordered), not twice."""

_EVENT_ORDER = [("trace_id", "ascending"), ("seq", "ascending")]
"""``publish``'s order of events (as ``ORDER BY trace_id, seq``: bytewise, nulls last)."""

_TRACES_SCHEMA = pa.schema(
    [("trace_id", pa.string()), ("events", pa.int64()), ("spans", pa.int64())]
)


@dataclass
class Stage:
    """Staged events, decisions and trace rows of one ingest run (temporary tables)."""

    store: Store
    batch_rows: int
    held: dict[str, list[pa.RecordBatch]] = field(default_factory=dict)
    rows: int = 0
    kept: int = 0
    """Traces ``settle`` kept (0 before it runs)."""
    whole: bool = False
    """Whether ``settle`` kept every trace staged."""
    memo: list[pa.RecordBatch] = field(default_factory=list)
    """Staged event batches kept in memory (``HOLD_BYTES`` at most), not yet in ``EVENTS``."""
    memo_bytes: int = 0
    spilled: bool = False
    """Whether some staged events went to ``EVENTS`` (else they are all in ``memo``)."""
    memo_version: int = 0
    """Bumped at every change of ``memo`` (added to, filtered, spilled)."""
    presorted: tuple[int, Future[pa.Table]] | None = None
    """``presort``'s sort of ``memo`` at that ``memo_version``, under way or done."""

    @classmethod
    def open(cls, store: Store, batch_rows: int) -> Stage:
        """Create the run's temporary tables (empty, the store's own column types)."""
        con = store.con
        con.execute(f"CREATE OR REPLACE TEMP TABLE {EVENTS} AS SELECT * FROM events LIMIT 0")
        con.execute(f"CREATE OR REPLACE TEMP TABLE {DECISIONS} AS SELECT * FROM decisions LIMIT 0")
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {TRACES} (trace_id VARCHAR, events BIGINT, spans BIGINT)"
        )
        return cls(store, batch_rows)

    def add(self, t: Traced) -> None:
        """Stage the rows of some whole-or-not-yet-known traces (flushed every ``batch_rows``)."""
        if t.counts is None or not t.counts.num_rows:
            return
        n = t.counts.num_rows
        spans = t.spans if t.spans is not None else pa.nulls(n, pa.int64())
        counts = pa.RecordBatch.from_arrays([*t.counts.columns, spans], schema=_TRACES_SCHEMA)
        for table, batch in ((DECISIONS, t.decisions), (TRACES, counts)):
            if batch.num_rows:
                self.held.setdefault(table, []).extend(_batches(batch))
        self.rows += t.decisions.num_rows + n
        if self.rows >= self.batch_rows:
            self.flush()
        if t.events.num_rows:
            self.memo.extend(_batches(t.events))
            self.memo_version += 1
            self.memo_bytes += t.events.nbytes
            if self.memo_bytes > HOLD_BYTES:
                self.spill()

    def spill(self) -> None:
        """Move the events held in memory into ``EVENTS``."""
        if self.memo:
            self._insert(EVENTS, self.memo)
            self.spilled = True
        self.memo, self.memo_bytes = [], 0
        self.memo_version += 1

    def _insert(self, table: str, batches: list[pa.RecordBatch]) -> None:
        """Rows into a temporary table on the store's writer thread, beside the decoding
        (what reads them next, ``settle`` or ``publish``, waits for them through ``con``)."""
        self.store.stage(table, pa.Table.from_batches(batches))

    def flush(self) -> None:
        """Insert the decisions and trace rows held into the temporary tables."""
        for table, batches in self.held.items():
            self._insert(table, batches)
        self.held, self.rows = {}, 0

    def presort(self) -> None:
        """Start sorting the events held in memory (pass 1 is over) on a thread, so that the
        sort overlaps ``settle`` and pass 2's queries: Arrow sorts without the GIL, DuckDB
        queries run without it too. ``publish`` uses the result when ``memo`` has not
        changed since."""
        if self.spilled or not self.memo:
            return
        table = pa.Table.from_batches(self.memo)
        self.presorted = (self.memo_version, background("sort", table.sort_by, _EVENT_ORDER))

    def _sorted_memo(self) -> pa.Table:
        """``memo`` as one table sorted by ``_EVENT_ORDER`` (``presort``'s, when still valid)."""
        done, self.presorted = self.presorted, None
        if done is not None and done[0] == self.memo_version:
            return done[1].result()
        return pa.Table.from_batches(self.memo).sort_by(_EVENT_ORDER)

    def spread(self) -> tuple[int, int] | None:
        """The most spans a staged trace has over all the chunks that staged it, and the
        staged spans in all; None when some chunk did not count its traces' spans."""
        self.flush()
        row = self.store.con.execute(
            f"""WITH t AS (SELECT sum(spans) AS n, count(*) - count(spans) AS unknown
                           FROM {TRACES} GROUP BY trace_id)
            SELECT coalesce(max(n), 0), coalesce(sum(n), 0), coalesce(sum(unknown), 0) FROM t"""
        ).fetchall()[0]
        return None if row[2] else (int(row[0]), int(row[1]))

    def settle(self, sole: bool = False) -> int:
        """Keep the staged rows of the traces wholly in one chunk (table ``LOCAL``), drop
        the rest; returns the number of traces kept (``whole``: all that were staged).

        ``sole``: every span of the run with a trace id was staged, into a store that held no
        span and gets no GenAI log record: a trace's stored spans are then its staged ones,
        so a trace one chunk staged, with its spans counted, is whole (``span_facts`` unread).
        """
        self.flush()
        con = self.store.con
        if sole:
            con.execute(
                f"""CREATE OR REPLACE TABLE {LOCAL} AS SELECT trace_id FROM {TRACES}
                GROUP BY trace_id HAVING count(*) = 1 AND count(spans) = 1"""
            )
        else:
            con.execute(
                f"""CREATE OR REPLACE TABLE {LOCAL} AS
                WITH s AS (SELECT trace_id, any_value(spans) AS spans FROM {TRACES}
                           GROUP BY trace_id HAVING count(*) = 1),
                f AS (SELECT trace_id, count(*) AS n FROM span_facts
                      WHERE trace_id IN (SELECT trace_id FROM s) GROUP BY trace_id)
                SELECT s.trace_id FROM s JOIN f USING (trace_id) WHERE f.n = s.spans
                AND s.trace_id NOT IN (SELECT trace_id FROM span_logs WHERE trace_id IS NOT NULL)"""
            )
        kept = _count(self.store, LOCAL)
        self.whole = kept == _count(self.store, TRACES)
        if not self.whole:
            for table in (EVENTS, DECISIONS, TRACES):
                con.execute(
                    f"DELETE FROM {table} WHERE trace_id NOT IN (SELECT trace_id FROM {LOCAL})"
                )
            ids = pa.array(
                [r[0] for r in con.execute(f"SELECT trace_id FROM {LOCAL}").fetchall()],
                pa.string(),
            )
            self.memo = [b.filter(pc.is_in(b.column("trace_id"), value_set=ids)) for b in self.memo]
            self.memo_version += 1
        self.kept = kept
        return kept

    def publish(self, told: Callable[[pa.Table], None] | None = None) -> int:
        """Write the staged rows to ``events``, ``decisions`` and ``traces`` ordered by trace
        (then by sequence, or staging order), drop the temporary tables; returns the number
        of events written. ``told(events)``: the events as written, when they were all in
        memory (not to be read before the insert is done: ``ingest``'s ``on_events``)."""
        self.flush()
        held = sum(b.num_rows for b in self.memo)
        if held and not self.spilled:  # all in memory: Arrow sorts them faster than DuckDB
            events = self._sorted_memo()
            if told is not None:
                told(events)
            self.store.insert("events", events)
        if self.spilled:  # a sort of more than memory holds: on all of DuckDB's threads
            with self.store.all_threads() as con:
                _publish_spilled(con, self.memo)
        self.memo, self.memo_bytes = [], 0
        con = self.store.con
        con.execute(
            f"INSERT INTO decisions BY NAME SELECT * FROM {DECISIONS} ORDER BY trace_id, rowid"
        )
        con.execute(f"INSERT INTO traces SELECT trace_id, events FROM {TRACES} ORDER BY trace_id")
        events = _count(self.store, EVENTS) + held
        self.drop()
        return events

    def drop(self) -> None:
        """Drop the temporary tables."""
        for table in (EVENTS, DECISIONS, TRACES, LOCAL):
            self.store.con.execute(f"DROP TABLE IF EXISTS {table}")


def _publish_spilled(con: duckdb.DuckDBPyConnection, memo: list[pa.RecordBatch]) -> None:
    """Insert the events of ``EVENTS`` and those still in ``memo`` into ``events``, in order."""
    if not memo:
        con.execute(f"INSERT INTO events BY NAME SELECT * FROM {EVENTS} ORDER BY trace_id, seq")
        return
    con.register("_stage_memo", pa.Table.from_batches(memo))
    try:
        con.execute(
            f"INSERT INTO events BY NAME SELECT * FROM (SELECT * FROM {EVENTS} "
            "UNION ALL BY NAME SELECT * FROM _stage_memo) ORDER BY trace_id, seq"
        )
    finally:
        con.unregister("_stage_memo")


def _batches(batch: pa.RecordBatch | pa.Table) -> list[pa.RecordBatch]:
    return batch.to_batches() if isinstance(batch, pa.Table) else [batch]


def _count(store: Store, table: str) -> int:
    rows = store.con.execute(f"SELECT count(*) FROM {table}").fetchall()
    return int(rows[0][0])
