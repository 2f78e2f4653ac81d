"""Pass-1 events: each chunk's traces computed in the worker that decoded the chunk.

Most traces lie wholly inside one chunk of one file (an exporter writes a
trace's spans together), so their events can be built from the chunk's own
``span_facts`` rows, in the same worker call as the decoding, without reading
them back from the store. ``decode_traced`` does this for every trace of the
chunk; the pipeline (``staging.Stage``) keeps the events of the traces that
turn out to be whole there and recomputes the others in pass 2.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.ingest.chunks import TRACE_KEY, Decoded, RecordChunk, Traced, decode, events


def chunk_events(facts: pa.RecordBatch | pa.Table) -> Traced:
    """``events`` of every trace of one chunk's ``span_facts`` rows, each computed as if the
    chunk held it whole (rows without a trace id, which pass 2 never reads, left out).

    Rows are grouped by trace id in ``pos`` order (a stable sort), as pass 2's query
    orders them.
    """
    table = facts if isinstance(facts, pa.Table) else pa.Table.from_batches([facts])
    if table.column("trace_id").null_count:
        table = table.filter(pc.is_valid(table.column("trace_id")))
    order = pc.sort_indices(table, sort_keys=[("trace_id", "ascending"), ("pos", "ascending")])
    table = table.take(order)
    return events(table.append_column(TRACE_KEY, table.column("trace_id")))


def decode_traced(chunk: RecordChunk) -> tuple[Decoded, Traced]:
    """``decode`` and ``chunk_events`` of one chunk in one call (one trip to a worker)."""
    d = decode(chunk)
    return d, chunk_events(d.facts)
