"""One chunk's ``spans`` and ``span_facts`` rows as per-column lists, turned into Arrow once.

The OTLP decoders append each span's values straight to the lists of ``Columns``
(no row tuple per span, no transposition), and each span's attribute dict to
``attrs``, which ``chunks._decoded`` turns into the record's facts and raw JSON;
a record that fails is cut off with ``drop`` (all or nothing per record).
``batches`` converts each list with the schema's type once per chunk; the columns
the two tables share (ids, times, service, file, record) are converted once for
both. A value a column cannot hold costs only that field (``tables.column_array``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from sponsio_audit.arrow_setup import POOL
from sponsio_audit.ingest.conventions import FACT_FIELDS
from sponsio_audit.ingest.tables import FACTS_SCHEMA, SPANS_SCHEMA, column_array, row_columns

_SHARED = ("trace_id", "span_id", "parent_span_id", "start_ns", "end_ns", "service", "record")
Arrays = dict[str, pa.Array | pa.ChunkedArray]
_SPAN_ONLY = ("name", "kind", "status", "scope", "attributes", "resource")
_FACT_TYPES = [FACTS_SCHEMA.field(k).type for k in FACT_FIELDS]


class Columns:
    """Per-column value lists of one chunk (``SPANS_SCHEMA`` and ``FACTS_SCHEMA``)."""

    def __init__(self, file_id: int, run: int, raw_json: bool = True, spans: bool = True) -> None:
        self.file_id = file_id
        self.run = run
        self.raw_json = raw_json
        """Decoders append the resource JSON (else None), as ``RecordChunk.raw_json`` says."""
        self.spans = spans
        """``batches`` builds the ``spans`` rows (else none), as ``RecordChunk.spans`` says."""
        self.cols: dict[str, list[Any]] = {k: [] for k in (*_SHARED, *_SPAN_ONLY)}
        self.facts: list[tuple[Any, ...]] = []  # FACT_FIELDS tuples, transposed once
        self.attrs: list[dict[str, Any]] = []
        """Attribute dicts of the record being read, one per span appended (``_decoded``
        makes its facts and raw JSON, then clears it)."""
        self.event_attrs: dict[int, dict[str, Any]] = {}
        """Index in ``attrs`` → the span's GenAI event attributes under its own (``GENAI_EVENTS``:
        what the conventions read), for the few spans that have such events."""

    def __len__(self) -> int:
        return len(self.facts)

    def drop(self, mark: int) -> None:
        """Cut every column back to ``mark`` rows (a record that failed adds nothing)."""
        for col in self.cols.values():
            del col[mark:]
        del self.facts[mark:]
        self.attrs.clear()
        self.event_attrs.clear()

    def _shared(self) -> Arrays:
        n = len(self.facts)
        out = {k: column_array(self.cols[k], SPANS_SCHEMA.field(k).type) for k in _SHARED}
        out["file_id"] = pa.repeat(pa.scalar(self.file_id, pa.int64()), n, memory_pool=POOL)
        return out

    def batches(self) -> tuple[pa.RecordBatch | pa.Table, pa.RecordBatch | pa.Table]:
        """The ``spans`` (none unless ``spans``) and ``span_facts`` rows as Arrow (a table when
        a text column outgrows one string array's 2 GiB)."""
        n = len(self.facts)
        shared = self._shared()
        if self.spans:
            spans = {
                **shared,
                **{k: column_array(self.cols[k], SPANS_SCHEMA.field(k).type) for k in _SPAN_ONLY},
            }
        else:
            spans = {f.name: pa.nulls(0, f.type, memory_pool=POOL) for f in SPANS_SCHEMA}
        facts = dict(shared)
        # from numpy: pa.array of a range converts element by element (0.1 µs per span)
        facts["pos"] = pa.array(np.arange(n, dtype=np.int64), memory_pool=POOL)
        facts.update(zip(FACT_FIELDS, row_columns(self.facts, _FACT_TYPES), strict=True))
        facts["run"] = pa.repeat(pa.scalar(self.run, pa.int64()), n, memory_pool=POOL)
        return _batch(spans, SPANS_SCHEMA), _batch(facts, FACTS_SCHEMA)


def _batch(
    arrays: dict[str, pa.Array | pa.ChunkedArray], schema: pa.Schema
) -> pa.RecordBatch | pa.Table:
    cols = [arrays[f.name] for f in schema]
    if any(isinstance(a, pa.ChunkedArray) for a in cols):
        return pa.Table.from_arrays(cols, schema=schema)
    return pa.RecordBatch.from_arrays(cols, schema=schema)
