"""The DuckDB store (ARCHITECTURE.md "Store schema"), and bounded Arrow batch loading.

``Store.open(None)`` is in memory; a path opens or creates a database file.
Rows reach DuckDB only as Arrow record batches of at most ``batch_rows`` rows
and about ``BATCH_BYTES`` of text (``Buffer``), so Python memory is bounded by
the batch size; ingest inserts inside ``Store.loading`` (few commits, one DuckDB
thread, the inserts on a ``writer.Writer`` thread of their own; docs/architecture.md
"Writing to the store"). The tables' schemas and rows as Arrow: ``tables``. SQL
takes values only as parameters; table names come from ``tables``, never from input.

Besides the documented tables, ``span_facts`` keeps what each span says under
the conventions (``conventions.FACT_FIELDS``) so events of a trace can be
recomputed when a later file adds spans to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from sponsio_audit.event import OPTIONAL_COLUMNS
from sponsio_audit.ingest.tables import TABLES, conformed, ddl, rows_batch
from sponsio_audit.ingest.writer import Writer

BATCH_ROWS = 50_000
BATCH_BYTES = 64 << 20
"""Text bytes of rows added one at a time after which a ``Buffer`` flushes (Arrow's
``string`` type holds at most 2 GiB per array)."""

COMMIT_ROWS = 122_880
"""DuckDB's row group: the fewest rows of a table a commit moves into it whole instead of
copying them again (and into the WAL); ``Store.loading`` commits when tables hold that many
(``Store._ripe``)."""


@dataclass
class Store:
    """A DuckDB connection holding the ingest tables (``con``)."""

    _con: duckdb.DuckDBPyConnection
    path: str | None = None
    raw_json: bool = True
    """Whether ingest writes ``spans.attributes``/``resource``, the raw JSON that nothing
    here reads (only a user's SQL on a database file, or Parquet written from the store)."""
    spans: bool = True
    """Whether ingest writes the ``spans`` rows at all. A store that nothing reads after its
    audit (``api.audit(lean=True)``: a scan without ``--db`` or ``--parquet``) counts its
    spans in ``span_facts``, which has one row per span too (``span_table``): building,
    shipping and inserting rows nobody reads cost 0.1 s of CPU (2-3%) of a 200k-span scan."""
    _loading: bool = field(default=False, init=False, repr=False)
    _uncommitted: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _writer: Writer | None = field(default=None, init=False, repr=False)
    _threads: int = field(default=1, init=False, repr=False)
    """DuckDB's own thread count, kept while ``loading`` runs on one thread."""

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection, once every insert handed to the writer has run (a
        connection is used by one thread at a time)."""
        self._drain()
        return self._con

    def _drain(self) -> None:
        if self._writer is not None:
            self._writer.drain()

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        memory_limit: str | None = None,
        raw_json: bool | None = None,
        spans: bool = True,
    ) -> Store:
        """Open (creating tables if needed) an in-memory store or a database file.

        ``memory_limit`` (e.g. ``"512MB"``) caps DuckDB's buffer pool; by default
        DuckDB may cache up to 80% of RAM, which shows up in RSS on large corpora.
        ``raw_json`` (``Store.raw_json``) is by default True for a database file only;
        ``spans``: ``Store.spans``.
        """
        config: dict[str, str | bool | int | float | list[str]] = {}
        if memory_limit:
            config["memory_limit"] = memory_limit
        con = duckdb.connect(str(path) if path is not None else ":memory:", config=config)
        for name, schema in TABLES.items():
            con.execute(ddl(name, schema))
        for col in OPTIONAL_COLUMNS:  # a store written before shared prompts: add them
            con.execute(f'ALTER TABLE events ADD COLUMN IF NOT EXISTS "{col}" BIGINT')
        keep = path is not None if raw_json is None else raw_json
        return cls(con, None if path is None else str(path), keep, spans)

    def close(self) -> None:
        """Close the connection."""
        self._stop_writer()
        self._con.close()

    @contextmanager
    def loading(self) -> Iterator[None]:
        """Run the inserts inside as one transaction on one DuckDB thread (rolled back on
        error), each insert on the writer thread while the caller goes on.

        DuckDB copies the rows of a commit of fewer than a row group's 122,880 rows once
        more into the table (and, for a file, into its write-ahead log), so ``Buffer``'s
        bounded batches each committed alone cost twice; a parallel insert's ordered merge
        costs CPU the workers need. ``commit`` makes rows visible to other cursors midway.
        An insert's error is raised at the next insert or use of ``con``.
        """
        if self._loading:
            yield
            return
        row = self._first("SELECT current_setting('threads')")
        self._threads = int(row[0]) if row else 1
        self._con.execute("SET threads = 1")
        self._con.begin()
        self._loading = True
        self._writer = Writer()
        try:
            yield
            self._writer.drain()
        except BaseException:
            self._stop_writer()
            with suppress(duckdb.Error):
                self._con.rollback()
            raise
        else:
            self._stop_writer()
            self._con.commit()
        finally:
            self._loading = False
            self._con.execute(f"SET threads = {self._threads}")

    @contextmanager
    def all_threads(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """``con`` with DuckDB's own thread count for the statements inside, also while
        ``loading``: for a sort once nothing else runs (the end of a run), whose cost on one
        thread would be all serial."""
        con = self.con
        if not self._loading:
            yield con
            return
        con.execute(f"SET threads = {self._threads}")
        try:
            yield con
        finally:
            con.execute("SET threads = 1")

    def _stop_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.stop()

    def commit(self) -> None:
        """Commit the rows inserted so far, so other cursors see them (inside ``loading``
        the next transaction begins at once)."""
        self._drain()
        self._commit()

    def _commit(self) -> None:
        self._con.commit()
        self._uncommitted.clear()
        if self._loading:
            self._con.begin()

    def insert(self, table: str, batch: pa.RecordBatch | pa.Table) -> None:
        """Append Arrow rows (a record batch or table) to ``table`` (a name from ``TABLES``);
        inside ``loading``, on the writer thread (``batch`` must not change after)."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        self._write(self._insert, table, batch)

    def stage(self, table: str, batch: pa.RecordBatch | pa.Table) -> None:
        """Append Arrow rows to a run's temporary table (``_stage_…``, a name from the code),
        as ``insert`` does (on the writer thread inside ``loading``), but no commit waits
        for them: they leave the store with the run."""
        if not (table.startswith("_stage_") and table.isidentifier()):
            raise ValueError(f"not a staging table: {table!r}")
        self._write(self._append, table, batch)

    def _write(self, fn: Any, table: str, batch: pa.RecordBatch | pa.Table) -> None:
        """``fn(table, batch)`` on the writer thread inside ``loading``, else now."""
        if self._writer is not None:
            self._writer.put(fn, table, batch)
        else:
            fn(table, batch)

    def _append(self, table: str, batch: pa.RecordBatch | pa.Table) -> None:
        con = self._con
        con.register("_ingest_batch", batch)
        try:
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _ingest_batch")
        finally:
            with suppress(duckdb.Error):  # an aborted transaction: keep the insert's own error
                con.unregister("_ingest_batch")

    def _insert(self, table: str, batch: pa.RecordBatch | pa.Table) -> None:
        self._append(table, batch)
        if self._loading:
            self._uncommitted[table] = self._uncommitted.get(table, 0) + batch.num_rows
            if self._ripe():
                self._commit()

    def _ripe(self) -> bool:
        """Whether to commit now: every table holds a row group or few rows (copying those
        is cheap), or one holds two row groups (memory stays bounded)."""
        pending = self._uncommitted.values()
        if max(pending) >= 2 * COMMIT_ROWS:
            return True
        return max(pending) >= COMMIT_ROWS and all(
            n >= COMMIT_ROWS or n < COMMIT_ROWS // 4 for n in pending
        )

    def _first(self, sql: str, params: list[Any] | None = None) -> tuple[Any, ...] | None:
        """The first row of a query, the result drained (``fetchone`` leaves it pending in
        DuckDB 2, and the next ``register`` on the connection then fails)."""
        rows = self.con.execute(sql, params or []).fetchall()
        return rows[0] if rows else None

    def has_sha256(self, sha: str) -> bool:
        """Whether a file with this content hash was ingested before."""
        return self._first("SELECT 1 FROM files WHERE sha256 = ? LIMIT 1", [sha]) is not None

    def has_bytes(self, size: int) -> bool:
        """Whether a stored file has this size (a file of another size cannot be a duplicate)."""
        return self._first("SELECT 1 FROM files WHERE bytes = ? LIMIT 1", [size]) is not None

    def path_with_sha256(self, sha: str) -> str | None:
        """The path of the stored file with this sha256 (None when there is none)."""
        row = self._first("SELECT path FROM files WHERE sha256 = ? ORDER BY file_id LIMIT 1", [sha])
        return None if row is None else str(row[0])

    def next_file_id(self) -> int:
        """The next unused ``file_id``."""
        row = self._first("SELECT coalesce(max(file_id), 0) + 1 FROM files")
        return int(row[0]) if row else 1

    def next_run(self) -> int:
        """The next unused ingest run number (``span_facts.run``, ``span_logs.run``)."""
        row = self._first(
            "SELECT greatest((SELECT coalesce(max(run), 0) FROM span_facts), "
            "(SELECT coalesce(max(run), 0) FROM span_logs)) + 1"
        )
        return int(row[0]) if row else 1

    @property
    def span_table(self) -> str:
        """The table with one row per span read: ``spans``, or ``span_facts`` in a store that
        writes no ``spans`` rows (``Store.spans``)."""
        return "spans" if self.spans else "span_facts"

    def count(self, table: str) -> int:
        """Number of rows in ``table``."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        row = self._first(f"SELECT count(*) FROM {table}")
        return int(row[0]) if row else 0


def prompt_sql(alias: str) -> str:
    """SQL of the LLM input of the ``events`` row ``alias`` (a shared prompt written out,
    ``event.shared_prompt``): what a reader of ``events.prompt`` selects instead."""
    a = alias
    return (
        f"coalesce({a}.prompt, (SELECT CASE WHEN {a}.prompt_chars >= 0 "
        f"AND length(h.prompt) >= {a}.prompt_chars "
        f"THEN substr(h.prompt, 1, {a}.prompt_chars) END FROM events h "
        f"WHERE h.trace_id = {a}.trace_id AND h.seq = {a}.prompt_from))"
    )


def _text_bytes(row: tuple[Any, ...]) -> int:
    return sum(len(v) for v in row if type(v) is str)


@dataclass
class Buffer:
    """Rows for one table, flushed to the store as Arrow batches of about ``batch_rows`` rows.

    Rows come one at a time (``add``) or as ready batches from workers
    (``add_batch``); both are written in the order they came.
    """

    store: Store
    table: str
    batch_rows: int = BATCH_ROWS
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    batches: list[pa.RecordBatch] = field(default_factory=list)
    pending: int = 0
    total: int = 0
    text: int = 0

    def add(self, row: tuple[Any, ...]) -> None:
        """Append one row (``TABLES[table]`` column order); flush when the batch is full
        (``batch_rows`` rows, or ``BATCH_BYTES`` of text)."""
        self.rows.append(row)
        self.text += _text_bytes(row)
        if len(self.rows) + self.pending >= self.batch_rows or self.text >= BATCH_BYTES:
            self.flush()

    def add_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Append a record batch (or table) of ``TABLES[table]``'s schema; flush when enough
        rows wait."""
        if self.rows:
            self._seal()
        batch = conformed(batch, TABLES[self.table])
        if isinstance(batch, pa.Table):
            self.batches.extend(batch.to_batches())
        else:
            self.batches.append(batch)
        self.pending += batch.num_rows
        if self.pending >= self.batch_rows:
            self.flush()

    def _seal(self) -> None:
        b = rows_batch(self.rows, TABLES[self.table])
        self.batches.extend(b.to_batches() if isinstance(b, pa.Table) else [b])
        self.pending += len(self.rows)
        self.rows, self.text = [], 0

    def flush(self) -> None:
        """Write everything buffered as one insert."""
        if self.rows:
            self._seal()
        if not self.pending:
            self.batches = []
            return
        self.store.insert(self.table, pa.Table.from_batches(self.batches, TABLES[self.table]))
        self.total += self.pending
        self.batches, self.pending = [], 0
