"""The store's tables: their Arrow schemas, their DuckDB DDL, and Python rows as Arrow.

Everything here is Arrow only (no DuckDB), so that ingest workers, which build
the rows, and Spark tasks import it without the database. A value a column
cannot hold (an integer beyond int64, a lone surrogate, a non-string in a
text column) costs only that field (``column_array``): it becomes NULL (or U+FFFD),
never failing the batch and the rows after it. Arrays are built in
``arrow_setup.POOL``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from sponsio_audit.arrow_setup import POOL
from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ingest.trace_events import ROW_FIELDS
from sponsio_audit.ingest.values import INT64, whole

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


def ddl(table: str, schema: pa.Schema) -> str:
    """``CREATE TABLE IF NOT EXISTS`` of ``table`` with the columns of ``schema``."""
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


def column_array(values: Sequence[Any], typ: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """One column's values as an Arrow array of ``typ`` built in ``POOL`` (chunked past a
    string array's 2 GiB); a value the type cannot hold becomes NULL (``_fit``)."""
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


def row_columns(rows: Sequence[tuple[Any, ...]], types: Sequence[pa.DataType]) -> list[Any]:
    """The columns of ``rows`` (tuples of ``len(types)`` values) as Arrow arrays of ``types``:
    converted as one struct array, which transposes them in C (a ``zip(*rows)`` of a chunk's
    22-field facts cost 0.2 µs per span), else (a value a column cannot hold, a string column
    past 2 GiB, a non-plain type) column by column, as ``column_array``."""
    if rows and not any(isinstance(t, pa.ExtensionType) for t in types):
        struct = pa.struct([pa.field(f"f{i}", t) for i, t in enumerate(types)])
        try:
            arr = pa.array(rows, type=struct, memory_pool=POOL)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, ValueError):
            arr = None
        if isinstance(arr, pa.StructArray) and not arr.null_count:
            return arr.flatten(memory_pool=POOL)
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(types)
    return [column_array(c, t) for c, t in zip(cols, types, strict=True)]


def decision_row(d: tuple[Any, ...]) -> tuple[Any, ...]:
    """A guard decision ``(file_id, record, trace_id, start_ns, …)`` as a ``decisions`` row
    (the time in µs, the column's unit)."""
    ts = d[3] // 1000 if d[3] is not None else None
    return (d[0], d[1], d[2], ts, *d[4:])


def rows_batch(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.RecordBatch | pa.Table:
    """Row tuples (``schema`` column order) as one Arrow record batch (a table of several
    batches when a text column holds more than a string array's 2 GiB)."""
    types = [f.type for f in schema]
    width = len(rows[0]) if rows else len(types)  # trailing optional columns left out: null
    arrays = row_columns(rows, types[:width])
    arrays += [column_array((None,) * len(rows), t) for t in types[width:]]
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
