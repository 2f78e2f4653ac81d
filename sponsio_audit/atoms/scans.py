"""Segmented scans over events sorted by (trace_id, seq) (ARCHITECTURE.md "Evaluating fast").

Every function takes ``start``: for each row, the index of the first row of
its trace (``trace_starts``), so one NumPy pass serves all traces at once
with no per-trace loop.
"""

from __future__ import annotations

import numpy as np


def starts_from_flags(is_start: np.ndarray) -> np.ndarray:
    """Index of each row's trace start, given a bool array marking first rows."""
    idx = np.arange(len(is_start), dtype=np.int64)
    return np.maximum.accumulate(np.where(is_start, idx, 0)) if len(idx) else idx


def trace_starts(trace_ids: np.ndarray) -> np.ndarray:
    """Index of each row's trace start; rows of one trace are contiguous."""
    ids = np.asarray(trace_ids)
    flags = np.ones(len(ids), dtype=bool)
    if len(ids) > 1:
        flags[1:] = ids[1:] != ids[:-1]
    return starts_from_flags(flags)


def last_index(mask: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Index of the last row at or before i in i's trace where ``mask`` holds, else -1."""
    idx = np.arange(len(mask), dtype=np.int64)
    last = np.maximum.accumulate(np.where(mask, idx, -1)) if len(idx) else idx
    return np.where(last >= start, last, -1)


def ever(mask: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Some row in [trace start, i] has ``mask`` (past "once")."""
    return last_index(mask, start) >= 0


def cumsum(values: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over [trace start, i] (as float64, exact below 2**53)."""
    total = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    return total[1:] - total[start]


def run_length(mask: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Length of the run of ``mask`` rows ending at i (0 where ``mask`` is false)."""
    idx = np.arange(len(mask), dtype=np.int64)
    gap = last_index(~mask, start)
    first = np.where(gap >= 0, gap + 1, start)
    return np.where(mask, idx - first + 1, 0).astype(np.float64)


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
