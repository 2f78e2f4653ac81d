"""Pass-1 events: each chunk's traces computed in the worker that decoded the chunk.

Most traces lie wholly inside one chunk of one file (an exporter writes a
trace's spans together), so their events can be built from the chunk's own
``span_facts`` values, in the same worker call as the decoding, without reading
them back from the store: straight from the per-column lists the chunk was
decoded into (``trace_tables.from_columns``), not from its Arrow batches.
``decode_traced`` does this for every trace of the chunk; the pipeline
(``staging.Stage``) keeps the events of the traces that turn out to be whole
there and recomputes the others in pass 2.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.ingest.chunks import (
    TRACE_KEY,
    Decoded,
    RecordChunk,
    Traced,
    acyclic,
    decode,
    events,
)
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.line_ranges import Ident, range_records
from sponsio_audit.ingest.trace_tables import from_columns


@dataclass(frozen=True)
class RangeChunk:
    """A chunk the worker reads itself: lines ``first``… at bytes [offset, offset+length)
    of the uncompressed JSON-lines file ``path`` (the file ``same`` names, when given),
    decoded as ``template`` (no records) says."""

    path: str
    offset: int
    length: int
    first: int
    template: RecordChunk
    same: Ident | None = None

    def read(self) -> RecordChunk:
        """The range's records as a ``RecordChunk`` (``template``'s other fields kept)."""
        recs = range_records(
            self.path, self.offset, self.length, self.first, self.template.limits, self.same
        )
        return replace(self.template, records=recs)


def decode_chunk(item: RecordChunk | RangeChunk) -> Decoded:
    """``decode`` of a chunk, reading it first when it is a ``RangeChunk`` (its Python
    column lists dropped: they are not sent back from a worker)."""
    return replace(_decoded(item), columns=None)


def _decoded(item: RecordChunk | RangeChunk) -> Decoded:
    return decode(item.read() if isinstance(item, RangeChunk) else item)


def chunk_events(d: Decoded) -> Traced:
    """``events`` of every trace of one decoded chunk, each computed as if the chunk held it
    whole (rows without a trace id, which pass 2 never reads, left out): from its column
    lists when it has them, else from its ``span_facts`` rows."""
    if d.columns is not None:
        return from_columns(d.columns)
    return table_events(d.facts)


def table_events(facts: pa.RecordBatch | pa.Table) -> Traced:
    """``chunk_events`` from a chunk's ``span_facts`` rows, grouped by trace id in ``pos``
    order (a stable sort), as pass 2's query orders them."""
    table = facts if isinstance(facts, pa.Table) else pa.Table.from_batches([facts])
    if table.column("trace_id").null_count:
        table = table.filter(pc.is_valid(table.column("trace_id")))
    order = pc.sort_indices(table, sort_keys=[("trace_id", "ascending"), ("pos", "ascending")])
    table = table.take(order)
    return events(table.append_column(TRACE_KEY, table.column("trace_id")), shared=False)


@acyclic
def decode_traced(item: RecordChunk | RangeChunk) -> tuple[Decoded, Traced]:
    """``decode_chunk`` and ``chunk_events`` of one chunk in one call (one trip to a worker),
    the collector paused across both: between them the chunk's column lists are alive, and a
    collection there walked them all for nothing (0.18 s of 200k spans' ingest)."""
    d = _decoded(item)
    return replace(d, columns=None), chunk_events(d)


def lost_chunk(item: RecordChunk | RangeChunk, how: str) -> Decoded:
    """What stands for ``decode_chunk(item)`` when worker processes died on the chunk twice
    (``workers.Workers.map``'s ``lost``; ``how``: the signal or exit code): each of its
    records listed as skipped, with the reason, and nothing else. Read here, never decoded."""
    return decode_chunk(_unread(item, how))


def lost_traced(item: RecordChunk | RangeChunk, how: str) -> tuple[Decoded, Traced]:
    """``lost_chunk`` for ``decode_traced``."""
    return decode_traced(_unread(item, how))


def _unread(item: RecordChunk | RangeChunk, how: str) -> RecordChunk:
    chunk = item.read() if isinstance(item, RangeChunk) else item
    why = BadRecord(f"not decoded: a worker process died on its chunk ({how}), twice")
    recs: list[tuple[int, bytes | BadRecord]] = [
        (no, r if isinstance(r, BadRecord) else why) for no, r in chunk.records
    ]
    return replace(chunk, records=recs)
