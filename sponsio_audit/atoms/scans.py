"""Segmented scans over events sorted by (trace_id, seq) (ARCHITECTURE.md "Evaluating fast").

Every function takes ``start``: for each row, the index of the first row of
its trace (``Segments.start``, via ``trace_starts``), so one NumPy pass serves all traces at once
with no per-trace loop.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sponsio_audit.ltl.columnar.segments import Segments


def starts_from_flags(is_start: np.ndarray) -> np.ndarray:
    """Index of each row's trace start, given a bool array marking first rows."""
    return Segments.of_flags(is_start).start


def trace_starts(trace_ids: np.ndarray) -> np.ndarray:
    """Index of each row's trace start; rows of one trace are contiguous."""
    return Segments.of_ids(pa.array(np.asarray(trace_ids))).start


def _marked(mask: np.ndarray, value: np.ndarray | None, default: np.ndarray) -> np.ndarray:
    """``np.where(mask, value or the row index, default)`` by scattering the mask's rows
    (masks here are sparse: one tool's calls, one event type)."""
    out = default.copy()
    at = np.flatnonzero(mask)
    out[at] = at if value is None else value[at]
    return out


def last_index(mask: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Index of the last row at or before i in i's trace where ``mask`` holds, else -1."""
    last = _marked(mask, None, np.full(len(mask), -1, dtype=np.int64))
    np.maximum.accumulate(last, out=last)
    return np.where(last >= start, last, -1)


def ever(mask: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Some row in [trace start, i] has ``mask`` (past "once")."""
    if not mask.any():
        return np.zeros(len(mask), dtype=bool)
    # rows of mask in [start, i] from one count: int32 (half the bytes of row indices)
    total = np.cumsum(mask, dtype=np.int32 if len(mask) < 2**31 else np.int64)
    before = total - mask  # rows of mask before i
    return total > before[start]


def cumsum(values: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over [trace start, i] (as float64, exact below 2**53)."""
    if values.dtype == bool and len(values) < 2**31:  # a count: exact in int32
        total = np.cumsum(values, dtype=np.int32)
        before = total - values
        return (total - before[start]).astype(np.float64)
    total = np.cumsum(values, dtype=np.float64)
    before = np.empty_like(total)  # sum of the rows before i
    if len(total):
        before[0] = 0.0
        before[1:] = total[:-1]
    total -= before[start]
    return total


def running_sum(values: np.ndarray, segments: Segments) -> np.ndarray:
    """``cumsum`` from the trace layout: one global running sum, less each trace's sum
    before it, spread by ``repeat`` (cheaper than gathering it at every row's start)."""
    if values.dtype == bool and len(values) < 2**31:  # a count: exact in int32
        total = np.cumsum(values, dtype=np.int32)
    else:
        total = np.cumsum(values, dtype=np.float64)
    full = segments.lengths > 0
    firsts = segments.first[full]
    before = np.where(firsts > 0, total[np.maximum(firsts - 1, 0)], 0).astype(total.dtype)
    total -= np.repeat(before, segments.lengths[full])
    return total.astype(np.float64, copy=False)


def running_any(mask: np.ndarray, segments: Segments) -> np.ndarray:
    """``ever`` from the trace layout (``running_sum`` of the mask > 0)."""
    if not mask.any():
        return np.zeros(len(mask), dtype=bool)
    return running_sum(mask, segments) > 0


def run_length(mask: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Length of the run of ``mask`` rows ending at i (0 where ``mask`` is false).

    Computed on the ``mask`` rows only (they are sparse: one tool's calls): a
    run starts at a mask row whose predecessor is not a mask row of the same
    trace, and its length at each row is the distance to that start, + 1.
    """
    out = np.zeros(len(mask), dtype=np.float64)
    at = np.flatnonzero(mask)
    if not len(at):
        return out
    st = start[at]
    new = np.empty(len(at), dtype=bool)
    new[0] = True
    np.not_equal(at[1:], at[:-1] + 1, out=new[1:])
    new[1:] |= st[1:] != st[:-1]
    k = np.arange(len(at), dtype=np.int64)
    head = np.maximum.accumulate(np.where(new, k, 0))
    out[at] = k - head + 1
    return out


def keep_last(
    source: np.ndarray,
    value: np.ndarray,
    unknown: np.ndarray,
    start: np.ndarray,
    default: float | bool = 0,
    default_unknown: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Value (and unknown bit) of the latest ``source`` row at or before i in i's trace.

    Rows before the first source row of their trace get ``default`` and
    ``default_unknown``.
    """
    last = last_index(source, start)
    seen = last >= 0
    at = np.where(seen, last, 0)
    out = np.where(seen, value[at], default) if len(at) else value.copy()
    unk = np.where(seen, unknown[at], default_unknown) if len(at) else unknown.copy()
    out = np.where(unk, np.zeros(1, dtype=value.dtype), out).astype(value.dtype)
    return out, unk.astype(bool)
