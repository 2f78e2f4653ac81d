"""The running sums of ``atoms.scans`` from the trace layout equal a per-trace loop.

``running_sum`` takes one global running sum and removes each trace's
part before it; it must give, at every row, what summing the trace's values
up to that row by hand gives (empty traces included), as ``cumsum`` does.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.atoms import scans
from sponsio_audit.ltl.columnar import Segments

_TRACES = st.lists(
    st.lists(st.one_of(st.none(), st.integers(0, 10**6)), max_size=12), min_size=1, max_size=6
)
"""Traces of rows: None off the rows of interest, else the row's value."""


def _by_hand(traces: list[list[int | None]]) -> tuple[list[float], list[bool]]:
    """Running sum and "some row of interest so far" per row, trace by trace."""
    sums, seen = [], []
    for t in traces:
        total, any_ = 0.0, False
        for v in t:
            if v is not None:
                total, any_ = total + v, True
            sums.append(total)
            seen.append(any_)
    return sums, seen


@settings(max_examples=300)
@given(_TRACES)
def test_running_sum_is_the_running_sum_of_each_trace(traces):
    seg = Segments.from_lengths([len(t) for t in traces])
    flat = [v for t in traces for v in t]
    at = np.array([i for i, v in enumerate(flat) if v is not None], dtype=np.int64)
    weights = np.array([v for v in flat if v is not None], dtype=np.float64)
    sums, seen = _by_hand(traces)
    values = np.zeros(len(flat))
    values[at] = weights
    mask = np.array([v is not None for v in flat], dtype=bool)
    assert scans.running_sum(values, seg).tolist() == sums
    assert scans.running_sum(values, seg).tolist() == scans.cumsum(values, seg.start).tolist()
    counts, _ = _by_hand([[None if v is None else 1 for v in t] for t in traces])
    assert scans.running_sum(mask, seg).tolist() == counts
    assert scans.running_any(mask, seg).tolist() == seen
    assert scans.running_any(mask, seg).tolist() == scans.ever(mask, seg.start).tolist()
