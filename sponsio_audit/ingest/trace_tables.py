"""Whole traces' spans → their ``events``, ``decisions`` and ``traces`` rows as Arrow (``Traced``).

A trace's spans reach ``trace_events.span_events`` from one of two places:

- pass 1 (``from_columns``): the per-column Python lists its chunk was decoded
  into (``columns.Columns``), before any Arrow: the values the store would read
  back, so no Arrow → Python conversion (the decoders and conventions give only
  values their column holds: ``values``, ``store._fit``);
- pass 2 and Spark (``from_table``): ``span_facts`` rows read back as Arrow,
  converted ``SLICE_ROWS`` rows at a time.

Either way the event bodies of all traces are turned into Arrow once, per
column, with the trace id and ``seq`` columns built from the per-trace counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import compress, islice
from operator import ne
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.arrow_setup import POOL
from sponsio_audit.event import EVENT_SCHEMA, OPTIONAL_COLUMNS
from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.conventions import FACT_FIELDS
from sponsio_audit.ingest.tables import (
    DECISIONS_SCHEMA,
    TRACES_SCHEMA,
    column_array,
    decision_row,
    row_columns,
    rows_batch,
)
from sponsio_audit.ingest.trace_events import BODY_FIELDS, SPAN_BASE, TraceSpans, span_events

SLICE_ROWS = 20_000
"""Rows converted at a time between Arrow and Python by ``from_table`` (a 200k-span
trace's column lists, or event tuples, are not all alive beside the rest)."""

_BODY_TYPES = [EVENT_SCHEMA.field(k).type for k in BODY_FIELDS]
_TAIL = OPTIONAL_COLUMNS  # null here


@dataclass(frozen=True)
class Traced:
    """Events (``EVENT_SCHEMA`` batch), guard decisions and (trace, event count) rows of
    some whole traces (a trace with no events is listed too)."""

    traces: int
    events: pa.RecordBatch | pa.Table
    decisions: pa.RecordBatch | pa.Table
    counts: pa.RecordBatch | pa.Table | None = None
    spans: pa.Array | None = None
    """Span rows of each trace, in ``counts`` order (how the pipeline tells a trace whole)."""


@dataclass
class _Out:
    """Event bodies, decisions and per-trace counts of the traces computed so far."""

    bodies: list[tuple] = field(default_factory=list)
    decisions: list[tuple] = field(default_factory=list)
    keys: list[Any] = field(default_factory=list)
    events: list[int] = field(default_factory=list)
    spans: list[int] = field(default_factory=list)

    def add(self, key: Any, spans: TraceSpans) -> None:
        """Compute one trace's events and decisions."""
        self.events.append(span_events(key, spans, self.bodies, self._decide))
        self.keys.append(key)
        self.spans.append(len(spans.facts))

    def _decide(self, d: tuple) -> None:
        self.decisions.append(decision_row(d))

    def traced(self) -> Traced:
        """The traces' rows as Arrow (``bodies`` is emptied on the way)."""
        counts = list(zip(self.keys, self.events, strict=True))
        return Traced(
            len(self.keys),
            _event_batch(self.bodies, self.keys, self.events),
            rows_batch(self.decisions, DECISIONS_SCHEMA),
            rows_batch(counts, TRACES_SCHEMA),
            pa.array(self.spans, pa.int64(), memory_pool=POOL),
        )


def _event_batch(
    bodies: list[tuple], keys: list[Any], counts: list[int]
) -> pa.RecordBatch | pa.Table:
    """``EVENT_SCHEMA`` rows of the event ``bodies`` of traces ``keys`` (``counts`` events
    each, in order), converted per column ``SLICE_ROWS`` rows at a time with the converted
    tuples freed (``bodies`` is emptied): a 200k-span trace's events are not all alive
    beside their Arrow columns."""
    n = len(bodies)
    sizes = np.asarray(counts, dtype=np.int64)
    trace_no = np.repeat(np.arange(len(keys)), sizes)
    tids = column_array(keys, EVENT_SCHEMA.field("trace_id").type)
    seqs = np.arange(n, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    if n <= SLICE_ROWS:
        return _part(bodies, _take(tids, trace_no), pa.array(seqs, memory_pool=POOL))
    parts: list[pa.RecordBatch] = []
    bodies.reverse()
    at = 0
    while bodies:
        part = [bodies.pop() for _ in range(min(SLICE_ROWS, len(bodies)))]
        to = at + len(part)
        b = _part(part, _take(tids, trace_no[at:to]), pa.array(seqs[at:to], memory_pool=POOL))
        at = to
        parts.extend(b.to_batches() if isinstance(b, pa.Table) else [b])
        del part
    table = pa.Table.from_batches(parts, EVENT_SCHEMA).combine_chunks(memory_pool=POOL)
    del parts
    batches = table.to_batches()
    return batches[0] if len(batches) == 1 else table


def _take(tids: pa.Array, rows: np.ndarray) -> pa.Array:
    """Each event's trace id: ``tids`` at its trace's number."""
    return pc.take(tids, pa.array(rows, memory_pool=POOL), memory_pool=POOL)


def _part(bodies: list[tuple], tids: Any, seqs: Any) -> pa.RecordBatch | pa.Table:
    n = len(bodies)
    arrays = [tids, seqs, *row_columns(bodies, _BODY_TYPES)]
    arrays += [pa.nulls(n, EVENT_SCHEMA.field(k).type, memory_pool=POOL) for k in _TAIL]
    if any(isinstance(a, pa.ChunkedArray) for a in arrays):
        return pa.Table.from_arrays(arrays, schema=EVENT_SCHEMA)
    return pa.RecordBatch.from_arrays(arrays, schema=EVENT_SCHEMA)


def _runs(keys: list[Any]) -> list[tuple[Any, int, int]]:
    """``(key, start, stop)`` of each run of equal consecutive keys."""
    n = len(keys)
    cuts = [0, *compress(range(1, n), map(ne, islice(keys, 1, None), keys)), n] if n else [0]
    return [(keys[a], a, b) for a, b in zip(cuts, islice(cuts, 1, None), strict=False)]


def _gathered(col: list[Any], ranges: list[tuple[int, int]]) -> list[Any]:
    return [v for a, b in ranges for v in col[a:b]]


def from_columns(cols: Columns) -> Traced:
    """Events of every trace of one chunk, each computed as if the chunk held it whole,
    from the chunk's own lists (rows without a trace id, which pass 2 never reads, left
    out; a trace's spans in chunk position order; traces by trace id)."""
    c = cols.cols
    base = [c[k] if k != "file_id" else [cols.file_id] * len(cols) for k in SPAN_BASE]
    sid, pid, fid, rec, start, end, service = base
    facts = cols.facts
    where: dict[Any, list[tuple[int, int]]] = {}
    for k, a, b in _runs(c["trace_id"]):
        if k is not None:
            where.setdefault(k, []).append((a, b))
    out = _Out()
    for k in sorted(where):
        ranges = where[k]
        if len(ranges) == 1:  # the usual case: a trace's spans written together
            ((a, b),) = ranges
            spans = TraceSpans(sid[a:b], pid[a:b], fid[a:b], rec[a:b], start[a:b], end[a:b],
                               service[a:b], facts[a:b])  # fmt: skip
        else:
            spans = TraceSpans(*(_gathered(col, ranges) for col in [*base, facts]))
        out.add(k, spans)
    return out.traced()


def _values(col: pa.ChunkedArray) -> list[Any]:
    """A column as Python values, equal strings as one shared object.

    A trace's rows repeat the same few strings (trace id, service, role, tool, …)
    on every span; ``to_pylist`` makes a new object per row (a 200k-span trace:
    about 300 MB more at its peak), the dictionary's values are made once each.
    """
    if col.null_count == len(col):
        return [None] * len(col)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return col.to_pylist()
    out: list[Any] = []
    for chunk in pc.dictionary_encode(col).chunks:
        words = chunk.dictionary.to_pylist()
        words.append(None)  # index -1: a null row
        idx = chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False).tolist()
        out.extend(map(words.__getitem__, idx))
    return out


def _table_columns(table: pa.Table, key: str, shared: bool) -> tuple[list[Any], list[list[Any]]]:
    """``table``'s ``key`` values, its ``SPAN_BASE`` columns and its ``FACT_FIELDS`` tuples
    (last) as Python lists, converted ``SLICE_ROWS`` rows at a time, so only one slice's
    fact columns are alive beside the tuples. ``shared``: strings as in ``_values``, else
    ``to_pylist`` (a new object per value: faster for a bounded number of rows)."""
    values = _values if shared else pa.ChunkedArray.to_pylist
    base: list[list[Any]] = [[] for _ in SPAN_BASE]
    facts: list[tuple] = []
    for at in range(0, table.num_rows, SLICE_ROWS):
        part = table.slice(at, SLICE_ROWS)
        for col, name in zip(base, SPAN_BASE, strict=True):
            col.extend(values(part.column(name)))
        cols = [values(part.column(name)) for name in FACT_FIELDS]
        facts.extend(zip(*cols, strict=True))
        del cols
    return values(table.column(key)), [*base, facts]


def from_table(table: pa.Table, key: str, shared: bool = True) -> Traced:
    """Events and decisions of the whole traces in ``table`` (columns ``key`` and
    ``ROW_FIELDS``, found by name; rows grouped by the key, in file position order)."""
    keys, cols = _table_columns(table, key, shared)
    runs = _runs(keys)
    del keys
    out = _Out()
    if len(runs) == 1:  # one trace (a 200k-span one, say): its lists as they are, not copied
        out.add(runs[0][0], TraceSpans(*cols))
    else:
        for k, a, b in runs:
            out.add(k, TraceSpans(*(col[a:b] for col in cols)))
    del cols
    return out.traced()
