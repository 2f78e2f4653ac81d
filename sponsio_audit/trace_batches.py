"""``whole_traces``: record batches grouped by trace, regrouped into tables of whole traces.

Evaluation and the events pass of ingest both need every row of a trace in
one call, yet read streams (a DuckDB cursor, a Spark partition) that cut
batches anywhere. ``whole_traces`` holds batches until a trace ends past
``rows`` rows and yields them as one table, cut at that trace boundary by
slicing (no copy). The key column is found by name, wherever it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

WHOLE_TRACE_ROWS = 50_000
"""Default size of a table of ``whole_traces`` (whole traces, so possibly more)."""


def _starts(keys: pa.Array | pa.ChunkedArray, previous: Any) -> np.ndarray:
    """Rows of a batch where a new trace starts (row 0 when its key differs from
    ``previous``, the last key of the batch before; None: nothing came before)."""
    n = len(keys)
    new = np.zeros(n, dtype=bool)
    if n > 1:
        diff = pc.fill_null(pc.not_equal(keys.slice(1), keys.slice(0, n - 1)), True)
        nulls = pc.and_(pc.is_null(keys.slice(1)), pc.is_null(keys.slice(0, n - 1)))
        new[1:] = np.asarray(pc.and_not(diff, nulls).to_numpy(zero_copy_only=False), dtype=bool)
    if n:
        first = keys[0].as_py()
        new[0] = previous is None or first != previous[0]
    return np.flatnonzero(new)


def whole_traces(
    batches: Iterable[pa.RecordBatch], key: str = "trace_id", rows: int = WHOLE_TRACE_ROWS
) -> Iterator[pa.Table]:
    """Tables of whole traces from batches whose rows are grouped by ``key``.

    A table is yielded at the first trace boundary once it holds ``rows`` rows
    (so only its last trace takes it past ``rows``), and the rest at the end.
    Lazy: it reads only as many batches as the next table needs. Grouping is
    assumed, not checked: a key that comes back after another is a new trace
    here (``evaluate`` checks it).
    """
    if rows < 1:
        raise ValueError(f"rows must be at least 1, not {rows}")
    held: list[pa.RecordBatch] = []
    n = 0
    last: tuple[Any] | None = None  # key of the last row held, boxed (a key may be null)
    for b in batches:
        if not b.num_rows:
            continue
        keys = b.column(key)
        starts = _starts(keys, last)
        at = 0  # rows of b before ``at`` are yielded already
        while True:  # cut at each trace start that completes a table of ``rows`` rows
            later = starts[starts >= at + max(rows - n, 0)]
            if not len(later):
                break
            cut = int(later[0])
            yield pa.Table.from_batches([*held, b.slice(at, cut - at)])
            held, n, at = [], 0, cut
        held.append(b.slice(at))
        n += b.num_rows - at
        last = (keys[-1].as_py(),)
    if n:
        yield pa.Table.from_batches(held)
