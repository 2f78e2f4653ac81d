"""Segments.of_ids: one segment per run of equal trace ids, the one rule for trace boundaries."""

from __future__ import annotations

import itertools

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from sponsio_audit.atoms.scans import trace_starts
from sponsio_audit.ltl.columnar import Segments


def _runs(ids: list[str | None]) -> list[int]:
    """Run lengths by hand: equal neighbours share a trace, a null id is a trace of its own."""
    out: list[int] = []
    for key, group in itertools.groupby(ids):
        n = len(list(group))
        out.extend([1] * n if key is None else [n])
    return out


@given(st.lists(st.sampled_from(["a", "b", "c", None]), max_size=30))
def test_one_segment_per_run_of_equal_ids(ids: list[str | None]) -> None:
    s = Segments.of_ids(pa.array(ids, type=pa.string()))
    assert s.lengths.tolist() == _runs(ids)
    assert s.n_rows == len(ids)
    # every row's trace start is the first row of its run
    starts, first = [], 0
    for n in _runs(ids):
        starts += [first] * n
        first += n
    assert s.start.tolist() == starts
    for k in range(min(len(ids), 9)):  # a slice of a longer array: its bits start mid-byte
        assert Segments.of_ids(pa.array(ids, type=pa.string()).slice(k)).lengths.tolist() == (
            _runs(ids[k:])
        )


def test_chunked_ids_cut_across_chunks() -> None:
    ids = pa.chunked_array([["a", "a"], ["a", "b"], ["b"]])
    s = Segments.of_ids(ids)
    assert s.lengths.tolist() == [3, 2]
    assert s.seg.tolist() == [0, 0, 0, 1, 1]
    assert trace_starts(ids.to_numpy()).tolist() == [0, 0, 0, 3, 3]


def test_no_rows_no_segments() -> None:
    s = Segments.of_ids(pa.array([], type=pa.string()))
    assert (s.n_segments, s.n_rows) == (0, 0)
