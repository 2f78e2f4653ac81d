"""Contract results as one Arrow table (RESULT_SCHEMA), built once for many contracts.

Each contract's verdict arrays are flattened to rows ordered by segment then
guarantee, and the rows of all contracts are laid end to end in NumPy before
a single Arrow table is made: one array per column, not one table per
contract.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from sponsio_audit.ltl.columnar.result import ContractResult
from sponsio_audit.ltl.columnar.segments import IntArray
from sponsio_audit.ltl.columnar.views import View
from sponsio_audit.vocab import KINDS, VERDICTS

RESULT_SCHEMA = pa.schema(
    [
        pa.field("trace", pa.int64(), nullable=False),
        pa.field("agent", pa.string()),
        pa.field("contract", pa.string(), nullable=False),
        pa.field("guarantee", pa.int32(), nullable=False),
        pa.field("verdict", pa.dictionary(pa.int8(), pa.string()), nullable=False),
        pa.field("kind", pa.dictionary(pa.int8(), pa.string())),
        pa.field("blame", pa.int64()),
        pa.field("opened", pa.int64()),
        pa.field("offending", pa.list_(pa.int64())),
        pa.field("reason", pa.string()),
        pa.field("blame_row", pa.int64()),
        pa.field("offending_rows", pa.list_(pa.int64())),
        pa.field("opened_row", pa.int64()),
    ]
)
"""One row per (contract, segment, guarantee). ``blame``, ``opened`` and
``offending`` are positions in the contract's view (§1); ``blame_row`` and
``offending_rows`` (and ``opened_row``) are the same events as row numbers of the table the view
was built from (for its seq and span id)."""


def _flat(a: np.ndarray) -> np.ndarray:
    """(guarantees, segments) → rows ordered by segment then guarantee."""
    return a.T.ravel()


def _nullable(a: IntArray) -> pa.Array:
    """Int64 values, null where negative."""
    neg = a < 0
    return pa.array(a, type=pa.int64(), mask=neg if neg.any() else None)


def _codes(a: np.ndarray, names: tuple[str, ...]) -> pa.Array:
    """Codes (−1 for null) as a dictionary array over ``names``."""
    neg = a < 0
    idx = pa.array(np.maximum(a, 0).astype(np.int8), mask=neg if neg.any() else None)
    return pa.DictionaryArray.from_arrays(idx, pa.array(names, type=pa.string()))


class _Part:
    """One contract's rows, flattened."""

    def __init__(self, r: ContractResult, view: View) -> None:
        n_g, n_s = r.verdict.shape
        self.r, self.view, self.n = r, view, n_g * n_s
        self.seg = np.repeat(np.arange(n_s, dtype=np.int64), n_g)
        self.guarantee = np.tile(np.arange(n_g, dtype=np.int32), n_s)
        self.blame, self.opened = _flat(r.blame), _flat(r.opened)
        first = view.segments.first
        rows = view.rows

        def row_of(pos: IntArray) -> IntArray:
            out = np.full(len(pos), -1, dtype=np.int64)
            at = np.flatnonzero(pos >= 0)
            out[at] = rows[first[self.seg[at]] + pos[at]]
            return out

        self.blame_row, self.opened_row = row_of(self.blame), row_of(self.opened)
        off_seg = np.repeat(self.seg, np.diff(r.off_ptr))
        self.off_rows = rows[first[off_seg] + r.off_pos] if len(r.off_pos) else r.off_pos


def results_table(results: Sequence[tuple[ContractResult, View]]) -> pa.Table:
    """Many ``ContractResult``s (each with its view) as one RESULT_SCHEMA table."""
    if not results:
        return RESULT_SCHEMA.empty_table()
    parts = [_Part(r, view) for r, view in results]
    n = sum(p.n for p in parts)

    def cat(get: str) -> np.ndarray:
        return np.concatenate([getattr(p, get) for p in parts])

    which = np.repeat(np.arange(len(parts), dtype=np.int32), [p.n for p in parts])
    ids = pa.array([p.r.contract.id for p in parts], type=pa.string())
    reasons: list[str] = []
    reason = []
    for p in parts:
        rc = _flat(p.r.reason).astype(np.int64)
        reason.append(np.where(rc < 0, -1, rc + len(reasons)))
        reasons.extend(p.r.reasons())
    rc = np.concatenate(reason)
    sizes = np.concatenate([[0], *(np.diff(p.r.off_ptr) for p in parts)])
    ptr = np.cumsum(sizes, dtype=np.int64)
    offending = pa.array(np.concatenate([p.r.off_pos for p in parts]), type=pa.int64())
    off_rows = pa.array(cat("off_rows"), type=pa.int64())
    columns = [
        pa.array(np.concatenate([p.view.trace[p.seg] for p in parts]), type=pa.int64()),
        _agents(parts, n),
        ids.take(pa.array(which)),
        pa.array(cat("guarantee"), type=pa.int32()),
        _codes(np.concatenate([_flat(p.r.verdict) for p in parts]), VERDICTS),
        _codes(np.concatenate([_flat(p.r.kind) for p in parts]), KINDS),
        _nullable(cat("blame")),
        _nullable(cat("opened")),
        pa.ListArray.from_arrays(pa.array(ptr), offending),
        pa.array(reasons, type=pa.string()).take(
            pa.array(np.maximum(rc, 0), mask=rc < 0 if (rc < 0).any() else None)
        ),
        _nullable(cat("blame_row")),
        pa.ListArray.from_arrays(pa.array(ptr), off_rows),
        _nullable(cat("opened_row")),
    ]
    return pa.Table.from_arrays(columns, schema=RESULT_SCHEMA)


def _agents(parts: list[_Part], n: int) -> pa.Array:
    """The agent of every row: null for contracts not per agent."""
    if all(p.view.agent is None for p in parts):
        return pa.nulls(n, pa.string())
    chunks = [
        pa.nulls(p.n, pa.string())
        if p.view.agent is None
        else pa.array(p.view.agent, type=pa.string()).take(pa.array(p.seg))
        for p in parts
    ]
    return pa.concat_arrays(chunks)


def result_table(r: ContractResult, view: View) -> pa.Table:
    """A ``ContractResult`` as rows of RESULT_SCHEMA, ordered by segment then guarantee."""
    return results_table([(r, view)])
