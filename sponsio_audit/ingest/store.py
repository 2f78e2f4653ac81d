"""The DuckDB store (ARCHITECTURE.md "Store schema"): tables, and bounded Arrow batch loading.

``Store.open(None)`` is in memory; a path opens or creates a database file.
Rows reach DuckDB only as Arrow record batches of at most ``batch_rows`` rows
(``Buffer``), so Python memory is bounded by the batch size. SQL takes values
only as parameters; table names come from this module, never from input.

Besides the documented tables, ``span_facts`` keeps what each span says under
the conventions (``conventions.FACT_FIELDS``) so events of a trace can be
recomputed when a later file adds spans to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ingest.trace_events import ROW_FIELDS

BATCH_ROWS = 50_000

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

_SQL_TYPES = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN"}
_JSON_COLUMNS = {("spans", "attributes"), ("spans", "resource")}
TABLES = {
    "files": FILES_SCHEMA,
    "skipped": SKIPPED_SCHEMA,
    "spans": SPANS_SCHEMA,
    "events": EVENT_SCHEMA,
    "decisions": DECISIONS_SCHEMA,
    "span_facts": FACTS_SCHEMA,
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

    @classmethod
    def open(cls, path: str | Path | None = None, *, memory_limit: str | None = None) -> Store:
        """Open (creating tables if needed) an in-memory store or a database file.

        ``memory_limit`` (e.g. ``"512MB"``) caps DuckDB's buffer pool; by default
        DuckDB may cache up to 80% of RAM, which shows up in RSS on large corpora.
        """
        config: dict[str, str | bool | int | float | list[str]] = {}
        if memory_limit:
            config["memory_limit"] = memory_limit
        con = duckdb.connect(str(path) if path is not None else ":memory:", config=config)
        for name, schema in TABLES.items():
            con.execute(_ddl(name, schema))
        return cls(con, None if path is None else str(path))

    def close(self) -> None:
        """Close the connection."""
        self.con.close()

    def insert(self, table: str, batch: pa.RecordBatch | pa.Table) -> None:
        """Append Arrow rows (a record batch or table) to ``table`` (a name from ``TABLES``)."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        self.con.register("_ingest_batch", batch)
        try:
            self.con.execute(f"INSERT INTO {table} SELECT * FROM _ingest_batch")
        finally:
            self.con.unregister("_ingest_batch")

    def _first(self, sql: str, params: list[Any] | None = None) -> tuple[Any, ...] | None:
        """The first row of a query, the result drained (``fetchone`` leaves it pending in
        DuckDB 2, and the next ``register`` on the connection then fails)."""
        rows = self.con.execute(sql, params or []).fetchall()
        return rows[0] if rows else None

    def has_sha256(self, sha: str) -> bool:
        """Whether a file with this content hash was ingested before."""
        return self._first("SELECT 1 FROM files WHERE sha256 = ? LIMIT 1", [sha]) is not None

    def next_file_id(self) -> int:
        """The next unused ``file_id``."""
        row = self._first("SELECT coalesce(max(file_id), 0) + 1 FROM files")
        return int(row[0]) if row else 1

    def next_run(self) -> int:
        """The next unused ingest run number (``span_facts.run``)."""
        row = self._first("SELECT coalesce(max(run), 0) + 1 FROM span_facts")
        return int(row[0]) if row else 1

    def count(self, table: str) -> int:
        """Number of rows in ``table``."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        row = self._first(f"SELECT count(*) FROM {table}")
        return int(row[0]) if row else 0


def _array(values: tuple[Any, ...], typ: pa.DataType) -> pa.Array:
    if isinstance(typ, pa.ExtensionType):
        return pa.ExtensionArray.from_storage(typ, pa.array(values, type=typ.storage_type))
    return pa.array(values, type=typ)


def decision_row(d: tuple[Any, ...]) -> tuple[Any, ...]:
    """A guard decision ``(file_id, record, trace_id, start_ns, …)`` as a ``decisions`` row
    (the time in µs, the column's unit)."""
    ts = d[3] // 1000 if d[3] is not None else None
    return (d[0], d[1], d[2], ts, *d[4:])


def rows_batch(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.RecordBatch:
    """Row tuples (``schema`` column order) as one Arrow record batch."""
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    arrays = [_array(c, f.type) for c, f in zip(cols, schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


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

    def add(self, row: tuple[Any, ...]) -> None:
        """Append one row (``TABLES[table]`` column order); flush when the batch is full."""
        self.rows.append(row)
        if len(self.rows) + self.pending >= self.batch_rows:
            self.flush()

    def add_batch(self, batch: pa.RecordBatch) -> None:
        """Append a record batch of ``TABLES[table]``'s schema; flush when enough rows wait."""
        if self.rows:
            self._seal()
        self.batches.append(batch)
        self.pending += batch.num_rows
        if self.pending >= self.batch_rows:
            self.flush()

    def _seal(self) -> None:
        self.batches.append(rows_batch(self.rows, TABLES[self.table]))
        self.pending += len(self.rows)
        self.rows = []

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
