"""Arrow ↔ Spark plumbing shared by ``spark.audit`` and ``spark.ingest``.

``spark_schema`` maps the project's Arrow schemas (strings, integers,
booleans, UTC timestamps, ``arrow.json`` text) to Spark's; ``storage``
turns a batch into the plain types Spark accepts from ``mapInArrow``.
A table of one schema travels inside another job's output as one Arrow IPC
``blob`` (``pack``/``unpack``), so one pass can yield several tables.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import types as T

_SIMPLE: dict[pa.DataType, T.DataType] = {
    pa.string(): T.StringType(),
    pa.large_string(): T.StringType(),
    pa.int64(): T.LongType(),
    pa.int32(): T.IntegerType(),
    pa.bool_(): T.BooleanType(),
    pa.binary(): T.BinaryType(),
}


def plain(t: pa.DataType) -> pa.DataType:
    """The storage type of an extension type (``arrow.json`` → string), the value type of a
    dictionary column (the verdict tables' repeated texts), else ``t``."""
    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    return t.value_type if pa.types.is_dictionary(t) else t


def spark_type(t: pa.DataType) -> T.DataType:
    """The Spark type of one of the project's Arrow column types."""
    t = plain(t)
    if pa.types.is_timestamp(t):
        return T.TimestampType()
    if t in _SIMPLE:
        return _SIMPLE[t]
    raise TypeError(f"no Spark type for Arrow {t}")


def spark_schema(schema: pa.Schema) -> T.StructType:
    """The Spark schema of an Arrow schema (every field nullable: Spark checks nothing more)."""
    return T.StructType([T.StructField(f.name, spark_type(f.type), True) for f in schema])


def plain_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with extension types replaced by their storage, every field nullable."""
    return pa.schema([pa.field(f.name, plain(f.type)) for f in schema])


def storage(batch: pa.RecordBatch | pa.Table) -> pa.Table:
    """``batch`` with extension columns as their storage (what Spark takes)."""
    cols = [c.cast(plain(c.type)) if plain(c.type) != c.type else c for c in batch.columns]
    return pa.Table.from_arrays(cols, schema=plain_schema(batch.schema))


def pack(table: pa.RecordBatch | pa.Table) -> bytes:
    """A table as one Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    t = storage(table)
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return sink.getvalue().to_pybytes()


def unpack(blobs: Iterator[bytes], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The batches of IPC streams, cast to ``plain_schema(schema)``."""
    target = plain_schema(schema)
    for blob in blobs:
        for b in pa.ipc.open_stream(blob):
            if b.num_rows:
                yield pa.Table.from_batches([b]).cast(target).to_batches()[0]
