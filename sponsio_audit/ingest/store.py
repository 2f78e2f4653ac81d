"""The DuckDB store (ARCHITECTURE.md "Store schema"): tables, and bounded Arrow batch loading.

``Store.open(None)`` is in memory; a path opens or creates a database file.
Rows reach DuckDB only as Arrow record batches of at most ``batch_rows`` rows
and about ``BATCH_BYTES`` of text (``Buffer``), so Python memory is bounded by
the batch size; ingest inserts inside ``Store.loading`` (few commits, one thread;
docs/architecture.md "Writing to the store"). A value a column cannot hold (an
integer beyond int64, a lone surrogate, a non-string in a text column) costs only
that field: it is stored as NULL (or with U+FFFD), never failing the batch and the
rows after it. SQL takes values only as parameters; table names come from this
module, never from input.

Besides the documented tables, ``span_facts`` keeps what each span says under
the conventions (``conventions.FACT_FIELDS``) so events of a trace can be
recomputed when a later file adds spans to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from sponsio_audit.arrow_memory import POOL
from sponsio_audit.event import EVENT_SCHEMA, OPTIONAL_COLUMNS
from sponsio_audit.ingest.trace_events import ROW_FIELDS
from sponsio_audit.ingest.values import INT64, whole

BATCH_ROWS = 50_000
BATCH_BYTES = 64 << 20
"""Text bytes of rows added one at a time after which a ``Buffer`` flushes (Arrow's
``string`` type holds at most 2 GiB per array)."""

COMMIT_ROWS = 122_880
"""DuckDB's row group: the fewest rows of a table a commit moves into it whole instead of
copying them again (and into the WAL); ``Store.loading`` commits when tables hold that many
(``Store._ripe``)."""

_JSON = pa.json_() if hasattr(pa, "json_") else pa.string()  # pyarrow >= 19

FILES_SCHEMA = pa.schema(
    [
        ("file_id", pa.int64()),
        ("path", pa.string()),
        ("format", pa.string()),
        ("bytes", pa.int64()),
        ("sha256", pa.string()),
        ("records", pa.int64()),
        ("skipped", pa.int64()),
    ]
)
SKIPPED_SCHEMA = pa.schema(
    [("file_id", pa.int64()), ("record", pa.int64()), ("reason", pa.string())]
)
SPANS_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("span_id", pa.string()),
        ("parent_span_id", pa.string()),
        ("name", pa.string()),
        ("kind", pa.string()),
        ("start_ns", pa.int64()),
        ("end_ns", pa.int64()),
        ("status", pa.string()),
        ("service", pa.string()),
        ("scope", pa.string()),
        # arrow.json: DuckDB takes these as JSON without re-validating our own output
        ("attributes", _JSON),
        ("resource", _JSON),
        ("file_id", pa.int64()),
        ("record", pa.int64()),
    ]
)
DECISIONS_SCHEMA = pa.schema(
    [
        ("file_id", pa.int64()),
        ("record", pa.int64()),
        ("trace_id", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("agent", pa.string()),
        ("tool", pa.string()),
        ("contract_id", pa.string()),
        ("result", pa.string()),
        ("message", pa.string()),
    ]
)
_FACT_TYPES = {
    "file_id": pa.int64(),
    "record": pa.int64(),
    "pos": pa.int64(),
    "start_ns": pa.int64(),
    "end_ns": pa.int64(),
    "agent_scope": pa.bool_(),
    "tokens_in": pa.int64(),
    "tokens_out": pa.int64(),
    "tokens_total": pa.int64(),
}
FACTS_SCHEMA = pa.schema(
    [(k, _FACT_TYPES.get(k, pa.string())) for k in ROW_FIELDS] + [("run", pa.int64())]
)

LOGS_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("span_id", pa.string()),
        ("event_name", pa.string()),
        ("time_ns", pa.int64()),
        ("body", pa.string()),  # compact JSON of the log body
        ("attributes", pa.string()),  # compact JSON of the log attributes
        ("file_id", pa.int64()),
        ("record", pa.int64()),
        ("pos", pa.int64()),
        ("run", pa.int64()),
    ]
)
"""GenAI log records (``otlp_logs``), attached to their spans when events are computed."""
TRACES_SCHEMA = pa.schema([("trace_id", pa.string()), ("events", pa.int64())])
"""Every trace read, with its event count: a trace with no events is still a trace."""

_SQL_TYPES = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN"}
_JSON_COLUMNS = {("spans", "attributes"), ("spans", "resource")}
TABLES = {
    "files": FILES_SCHEMA,
    "skipped": SKIPPED_SCHEMA,
    "spans": SPANS_SCHEMA,
    "events": EVENT_SCHEMA,
    "decisions": DECISIONS_SCHEMA,
    "span_facts": FACTS_SCHEMA,
    "span_logs": LOGS_SCHEMA,
    "traces": TRACES_SCHEMA,
}


def _ddl(table: str, schema: pa.Schema) -> str:
    cols = []
    for f in schema:
        if (table, f.name) in _JSON_COLUMNS:
            typ = "JSON"
        elif pa.types.is_timestamp(f.type):
            typ = "TIMESTAMPTZ"
        else:
            typ = _SQL_TYPES[f.type]
        cols.append(f'"{f.name}" {typ}{"" if f.nullable else " NOT NULL"}')
    return f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(cols)})"


@dataclass
class Store:
    """A DuckDB connection holding the ingest tables."""

    con: duckdb.DuckDBPyConnection
    path: str | None = None
    raw_json: bool = True
    """Whether ingest writes ``spans.attributes``/``resource``, the raw JSON that nothing
    here reads (only a user's SQL on a database file, or Parquet written from the store)."""
    _loading: bool = field(default=False, init=False, repr=False)
    _uncommitted: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        memory_limit: str | None = None,
        raw_json: bool | None = None,
    ) -> Store:
        """Open (creating tables if needed) an in-memory store or a database file.

        ``memory_limit`` (e.g. ``"512MB"``) caps DuckDB's buffer pool; by default
        DuckDB may cache up to 80% of RAM, which shows up in RSS on large corpora.
        ``raw_json`` (``Store.raw_json``) is by default True for a database file only.
        """
        config: dict[str, str | bool | int | float | list[str]] = {}
        if memory_limit:
            config["memory_limit"] = memory_limit
        con = duckdb.connect(str(path) if path is not None else ":memory:", config=config)
        for name, schema in TABLES.items():
            con.execute(_ddl(name, schema))
        for col in OPTIONAL_COLUMNS:  # a store written before shared prompts: add them
            con.execute(f'ALTER TABLE events ADD COLUMN IF NOT EXISTS "{col}" BIGINT')
        keep = path is not None if raw_json is None else raw_json
        return cls(con, None if path is None else str(path), keep)

    def close(self) -> None:
        """Close the connection."""
        self.con.close()

    @contextmanager
    def loading(self) -> Iterator[None]:
        """Run the inserts inside as one transaction on one DuckDB thread (rolled back on error).

        DuckDB copies the rows of a commit of fewer than a row group's 122,880 rows once
        more into the table (and, for a file, into its write-ahead log), so ``Buffer``'s
        bounded batches each committed alone cost twice; a parallel insert's ordered merge
        costs CPU the workers need. ``commit`` makes rows visible to other cursors midway.
        """
        if self._loading:
            yield
            return
        row = self._first("SELECT current_setting('threads')")
        self.con.execute("SET threads = 1")
        self.con.begin()
        self._loading = True
        try:
            yield
        except BaseException:
            with suppress(duckdb.Error):
                self.con.rollback()
            raise
        else:
            self.con.commit()
        finally:
            self._loading = False
            self.con.execute(f"SET threads = {int(row[0]) if row else 1}")

    def commit(self) -> None:
        """Commit the rows inserted so far, so other cursors see them (inside ``loading``
        the next transaction begins at once)."""
        self.con.commit()
        self._uncommitted.clear()
        if self._loading:
            self.con.begin()

    def insert(self, table: str, batch: pa.RecordBatch | pa.Table) -> None:
        """Append Arrow rows (a record batch or table) to ``table`` (a name from ``TABLES``)."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        self.con.register("_ingest_batch", batch)
        try:
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _ingest_batch")
        finally:
            self.con.unregister("_ingest_batch")
        if self._loading:
            self._uncommitted[table] = self._uncommitted.get(table, 0) + batch.num_rows
            if self._ripe():
                self.commit()

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


def _fit(v: Any, typ: pa.DataType) -> Any:
    """``v`` as a value of column type ``typ``, or None when it cannot be one."""
    if v is None:
        return None
    if pa.types.is_integer(typ) or pa.types.is_timestamp(typ):
        return v if type(v) is int and -INT64 <= v < INT64 else None
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return whole(v) if isinstance(v, str) else None
    if pa.types.is_boolean(typ):
        return v if isinstance(v, bool) else None
    return v


def _array(values: Sequence[Any], typ: pa.DataType) -> pa.Array | pa.ChunkedArray:
    storage = typ.storage_type if isinstance(typ, pa.ExtensionType) else typ
    try:
        arr = pa.array(values, type=storage, memory_pool=POOL)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, ValueError):
        arr = pa.array([_fit(v, storage) for v in values], type=storage, memory_pool=POOL)
    if isinstance(typ, pa.ExtensionType):
        if isinstance(arr, pa.ChunkedArray):
            return pa.chunked_array(
                [pa.ExtensionArray.from_storage(typ, c) for c in arr.chunks], typ
            )
        return pa.ExtensionArray.from_storage(typ, arr)
    return arr


def decision_row(d: tuple[Any, ...]) -> tuple[Any, ...]:
    """A guard decision ``(file_id, record, trace_id, start_ns, …)`` as a ``decisions`` row
    (the time in µs, the column's unit)."""
    ts = d[3] // 1000 if d[3] is not None else None
    return (d[0], d[1], d[2], ts, *d[4:])


def rows_batch(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.RecordBatch | pa.Table:
    """Row tuples (``schema`` column order) as one Arrow record batch (a table of several
    batches when a text column holds more than a string array's 2 GiB)."""
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    if len(cols) < len(schema) and rows:  # trailing optional columns left out: null
        cols += [(None,) * len(rows)] * (len(schema) - len(cols))
    arrays = [_array(c, f.type) for c, f in zip(cols, schema, strict=True)]
    if any(isinstance(a, pa.ChunkedArray) for a in arrays):
        return pa.Table.from_arrays(arrays, schema=schema)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def conformed(batch: pa.RecordBatch | pa.Table, schema: pa.Schema) -> pa.RecordBatch | pa.Table:
    """``batch`` with the trailing optional columns of ``schema`` it lacks added as nulls
    (``event.OPTIONAL_COLUMNS``: producers that never share a prompt leave them out)."""
    missing = schema.names[batch.num_columns :]
    if not missing or batch.schema.names != schema.names[: batch.num_columns]:
        return batch
    n = batch.num_rows
    arrays = [*batch.columns, *(pa.nulls(n, schema.field(m).type) for m in missing)]
    if isinstance(batch, pa.Table):
        return pa.Table.from_arrays(arrays, schema=schema)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


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
