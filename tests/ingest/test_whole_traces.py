"""``whole_traces``: a stream of record batches regrouped into tables of whole traces.

Issue 17, problem 2: ``ingest/chunks.trace_chunks`` took the trace key from
column 0 (``b.column(0)``); ``whole_traces`` takes it by name, and
``trace_chunks`` is built on it. Properties: the concatenated output is the
input, row for row; no trace is in two tables; tables reach about ``rows``
rows; the input is read lazily (an endless stream still yields).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

SCHEMA = pa.schema([("pos", pa.int64()), ("trace_id", pa.string()), ("v", pa.string())])


def _batches(lengths: list[int], size: int) -> list[pa.RecordBatch]:
    keys = [f"t{i:03d}" for i, n in enumerate(lengths) for _ in range(n)]
    table = pa.table(
        {"pos": range(len(keys)), "trace_id": keys, "v": [str(i) for i in range(len(keys))]},
        schema=SCHEMA,
    )
    return table.to_batches(max_chunksize=size)


@given(
    lengths=st.lists(st.integers(1, 12), min_size=0, max_size=30),
    size=st.integers(1, 9),
    rows=st.integers(1, 40),
)
def test_whole_traces_never_split_a_trace_and_keep_every_row(lengths, size, rows):
    from sponsio_audit import whole_traces

    batches = _batches(lengths, size)
    tables = list(whole_traces(iter(batches), key="trace_id", rows=rows))
    got = [r for t in tables for r in t.to_pylist()]
    assert got == [r for b in batches for r in b.to_pylist()]
    seen: set[str] = set()
    for t in tables:
        assert t.num_rows > 0
        ids = set(t.column("trace_id").to_pylist())
        assert not ids & seen, "a trace is in two tables"
        seen |= ids
    # a table is cut as soon as it holds ``rows`` rows and a trace ends: only the last
    # trace of a table may take it past ``rows``
    for t in tables[:-1]:
        ids = t.column("trace_id").to_pylist()
        assert len(ids) >= rows
        assert len(ids) - ids.count(ids[-1]) < rows


def test_whole_traces_read_lazily():
    from sponsio_audit import whole_traces

    def endless() -> Iterator[pa.RecordBatch]:
        for i in itertools.count():
            yield pa.record_batch(
                {"pos": [i, i], "trace_id": [f"t{i:09d}"] * 2, "v": ["a", "b"]}, schema=SCHEMA
            )

    first = next(iter(whole_traces(endless(), rows=10)))
    assert first.num_rows == 10


def test_trace_chunks_takes_the_key_by_name():
    """The ingest cut (``trace_chunks``) with the key not in column 0 keeps traces whole."""
    from sponsio_audit.ingest.chunks import trace_chunks

    batches = _batches([3, 4, 2, 5], 2)
    tables = list(trace_chunks(iter(batches), rows=3, key="trace_id"))
    owners = [set(t.column("trace_id").to_pylist()) for t in tables]
    assert sum(len(o) for o in owners) == 4  # each of the 4 traces in exactly one table
