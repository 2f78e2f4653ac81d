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
        pa.field("contract", pa.dictionary(pa.int32(), pa.string()), nullable=False),
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


def _positions(results: Sequence[tuple[ContractResult, View]], get: str) -> np.ndarray:
    """A view-position array of every contract (``blame`` or ``opened``), rows laid end
    to end."""
    return np.concatenate([_flat(getattr(r, get)) for r, _ in results])


def _rows_of(
    results: Sequence[tuple[ContractResult, View]], pos: IntArray, sizes: list[int]
) -> IntArray:
    """View positions (−1: none) as row numbers of the table each view was built from."""
    out = np.full(len(pos), -1, dtype=np.int64)
    at = np.flatnonzero(pos >= 0)
    if not len(at):
        return out
    bounds = np.cumsum([0, *sizes])
    cut = np.searchsorted(at, bounds)
    for i, (r, view) in enumerate(results):
        mine = at[cut[i] : cut[i + 1]]
        if len(mine):
            seg = (mine - bounds[i]) // r.verdict.shape[0]
            out[mine] = view.rows[view.segments.first[seg] + pos[mine]]
    return out


def _offending_rows(r: ContractResult, view: View) -> IntArray:
    """The offending positions of one contract as row numbers of its view's table."""
    if not len(r.off_pos):
        return r.off_pos
    n_g = r.verdict.shape[0]
    first = view.segments.first if n_g == 1 else np.repeat(view.segments.first, n_g)
    return view.rows[np.repeat(first, np.diff(r.off_ptr)) + r.off_pos]


def _names(values: list[str], sizes: list[int]) -> pa.Array:
    """``values[i]`` repeated ``sizes[i]`` times, as codes into the distinct values (no
    string copied per row; the engine's text columns are such dictionaries)."""
    distinct = list(dict.fromkeys(values))
    code = {v: k for k, v in enumerate(distinct)}
    idx = np.repeat(np.array([code[v] for v in values], dtype=np.int32), sizes)
    return pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(distinct, type=pa.string()))


def results_table(results: Sequence[tuple[ContractResult, View]]) -> pa.Table:
    """Many ``ContractResult``s (each with its view) as one RESULT_SCHEMA table."""
    if not results:
        return RESULT_SCHEMA.empty_table()
    sizes = [r.verdict.size for r, _ in results]
    n = sum(sizes)
    n_gs = [r.verdict.shape[0] for r, _ in results]
    reasons: list[str] = []
    reason = []
    for r, _ in results:
        rc = _flat(r.reason).astype(np.int64)
        reason.append(np.where(rc < 0, -1, rc + len(reasons)))
        reasons.extend(r.reasons())
    rc = np.concatenate(reason)
    none = rc < 0
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.concatenate([np.diff(r.off_ptr) for r, _ in results]), out=ptr[1:])
    offending = pa.array(np.concatenate([r.off_pos for r, _ in results]), type=pa.int64())
    offsets = pa.array(ptr)  # both list columns share them
    off_rows = np.concatenate([_offending_rows(r, v) for r, v in results])
    blame, opened = _positions(results, "blame"), _positions(results, "opened")
    trace = [
        v.trace if g == 1 else np.repeat(v.trace, g)
        for (_, v), g in zip(results, n_gs, strict=True)
    ]
    guarantee = [
        np.zeros(k, np.int32) if g == 1 else np.tile(np.arange(g, dtype=np.int32), k // g)
        for g, k in zip(n_gs, sizes, strict=True)
    ]
    columns = [
        pa.array(np.concatenate(trace), type=pa.int64()),
        _agents(results, sizes, n),
        _names([r.contract.id for r, _ in results], sizes),
        pa.array(np.concatenate(guarantee), type=pa.int32()),
        _codes(np.concatenate([_flat(r.verdict) for r, _ in results]), VERDICTS),
        _codes(np.concatenate([_flat(r.kind) for r, _ in results]), KINDS),
        _nullable(blame),
        _nullable(opened),
        pa.ListArray.from_arrays(offsets, offending),
        pa.nulls(n, pa.string())
        if none.all()
        else pa.array(reasons, type=pa.string()).take(
            pa.array(np.maximum(rc, 0), mask=none if none.any() else None)
        ),
        _nullable(_rows_of(results, blame, sizes)),
        pa.ListArray.from_arrays(offsets, pa.array(off_rows, type=pa.int64())),
        _nullable(_rows_of(results, opened, sizes)),
    ]
    return pa.Table.from_arrays(columns, schema=RESULT_SCHEMA)


def _agents(results: Sequence[tuple[ContractResult, View]], sizes: list[int], n: int) -> pa.Array:
    """The agent of every row: null for contracts not per agent."""
    if all(v.agent is None for _, v in results):
        return pa.nulls(n, pa.string())
    chunks = [
        pa.nulls(k, pa.string())
        if v.agent is None
        else pa.array(v.agent, type=pa.string()).take(
            pa.array(np.repeat(np.arange(len(v.agent)), r.verdict.shape[0]))
        )
        for (r, v), k in zip(results, sizes, strict=True)
    ]
    return pa.concat_arrays(chunks)


def result_table(r: ContractResult, view: View) -> pa.Table:
    """A ``ContractResult`` as rows of RESULT_SCHEMA, ordered by segment then guarantee."""
    return results_table([(r, view)])
