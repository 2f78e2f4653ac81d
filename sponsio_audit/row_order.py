"""Row orders of the verdict and violation tables, without sorting strings row by row.

``ranks`` gives each row of a text column (dictionary or plain strings) its dense
rank among the column's distinct values, so a stable NumPy ``lexsort`` of
integer ranks orders the rows (Arrow sorts no dictionaries): ``in_order`` by
(trace, contract, guarantee), as the engines and the store keep them, and
``report_order`` as every report lists violations. Either returns the table
itself, not a copy, when it is in that order already.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.threads import cpus, ordered_map
from sponsio_audit.vocab import SEVERITIES

PARALLEL_ROWS = 50_000
"""Rows from which ``_taken`` takes the columns on two threads (fewer: not worth a thread)."""


def text_codes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(per-row code, values) of a text column (a dictionary array or strings); nulls get
    the code ``len(values)``."""
    if isinstance(column, pa.ChunkedArray):
        column = column.unify_dictionaries().combine_chunks() if _is_text(column) else (
            column.combine_chunks()
        )  # fmt: skip
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    values = column.dictionary
    codes = column.indices.to_numpy(zero_copy_only=False)
    if column.null_count:
        codes = np.where(np.asarray(column.is_valid()), codes, len(values))
    return np.asarray(codes, dtype=np.int64), values


def _is_text(column: pa.ChunkedArray | pa.Array) -> bool:
    return pa.types.is_dictionary(column.type)


def ranks(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Each row's dense rank among the column's distinct strings (ascending as Arrow sorts
    strings; nulls last)."""
    codes, values = text_codes(column)
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    order = pc.sort_indices(values).to_numpy()
    ordered = values.take(pa.array(order))
    new = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        same = pc.equal(ordered.slice(1), ordered.slice(0, len(order) - 1))
        new[1:] = ~np.asarray(pc.fill_null(same, False).to_numpy(zero_copy_only=False), bool)
    rank = np.empty(len(order) + 1, dtype=np.int64)
    rank[order] = np.cumsum(new) - 1
    rank[len(order)] = len(order)  # null
    return rank[codes]


def in_order(table: pa.Table) -> pa.Table:
    """Rows of a raw, verdicts or violations table by (trace_id, contract_id, guarantee),
    stable: integer ranks of the strings in a NumPy sort (Arrow sorts no dictionaries)."""
    if table.num_rows < 2:
        return table
    g = table.column("guarantee").to_numpy()
    order = np.lexsort((g, ranks(table.column("contract_id")), ranks(table.column("trace_id"))))
    return _taken(table, order)


def _taken(table: pa.Table, order: np.ndarray) -> pa.Table:
    """``table``'s rows in ``order``; ``table`` itself, not a copy, when that is its order.
    A large table's columns are taken on two threads (Arrow's take frees the GIL), about
    half of its bytes each."""
    if np.array_equal(order, np.arange(len(order))):
        return table
    at = pa.array(order)
    workers = min(2, cpus())
    if table.num_rows < PARALLEL_ROWS or workers < 2 or table.num_columns < 2:
        return table.take(at)
    parts: list[list[int]] = [[], []]
    load = [0, 0]
    for i in sorted(range(table.num_columns), key=lambda i: -table.column(i).nbytes):
        k = 0 if load[0] <= load[1] else 1  # the larger columns first, each to the lighter
        parts[k].append(i)
        load[k] += table.column(i).nbytes
    columns: dict[int, pa.ChunkedArray] = {}
    for part, got in zip(parts, ordered_map(lambda p: _take(table, p, at), parts, 2), strict=True):
        columns.update(zip(part, got, strict=True))
    return pa.Table.from_arrays([columns[i] for i in range(table.num_columns)], schema=table.schema)


def _take(table: pa.Table, columns: list[int], at: pa.Array) -> list[pa.ChunkedArray]:
    return [pc.take(table.column(i), at) for i in columns]


def report_order(table: pa.Table) -> pa.Table:
    """Violation rows in the order reports list them: (severity rank, unknown severities
    last; contract; trace; guarantee; step, no step first), stable. ``api.audit`` stores
    them so, and ``report.data.load`` finds them so (no copy) unless another writer did not.

    Rows already in that order are found so by comparing neighbours (no sort); rows in the
    engines' order (trace, contract, guarantee, step) need only a stable sort by severity
    and contract, the rest of the order being theirs already.
    """
    if table.num_rows < 2:
        return table
    sev = table.column("severity")
    if pa.types.is_dictionary(sev.type):
        sev = sev.cast(sev.type.value_type)
    rank_of = pa.array(range(len(SEVERITIES)), pa.int64())
    at = pc.index_in(sev, value_set=pa.array(SEVERITIES, pa.string()))
    sev_rank = pc.fill_null(pc.take(rank_of, at), 9).to_numpy()
    contract = ranks(table.column("contract_id"))
    g = table.column("guarantee").to_numpy()
    seq = pc.fill_null(table.column("seq"), -1).to_numpy()
    trace = table.column("trace_id")
    if _ascending([sev_rank, contract], trace, [g, seq]):
        return table
    if _ascending([], trace, [contract, g, seq]):
        order = np.argsort(sev_rank * (int(contract.max()) + 1) + contract, kind="stable")
    else:
        order = np.lexsort((seq, g, ranks(trace), contract, sev_rank))
    return _taken(table, order)


def _ascending(
    before: list[np.ndarray], text: pa.ChunkedArray | pa.Array, after: list[np.ndarray]
) -> bool:
    """Whether the rows are in ascending order of (``before``…, ``text``, ``after``…), each
    row against the next: integer keys in NumPy, the plain text column (no null) as Arrow
    compares strings, byte by byte, as it sorts them (``ranks``)."""
    n = len(text)
    if pa.types.is_dictionary(text.type) or text.null_count:
        return False  # told by the sort instead
    less = np.zeros(n - 1, dtype=bool)
    same = np.ones(n - 1, dtype=bool)
    a, b = text.slice(0, n - 1), text.slice(1)
    keys: list[tuple[Any, Any]] = [(k[:-1] < k[1:], k[:-1] == k[1:]) for k in before]
    keys.append((None, None))  # the text's place
    keys += [(k[:-1] < k[1:], k[:-1] == k[1:]) for k in after]
    for lt, eq in keys:
        if lt is None:
            lt = _bools(pc.less(a, b))
            eq = _bools(pc.equal(a, b))
        less |= same & lt
        same &= eq
        if not (less | same).all():  # a row after one it should precede
            return False
    return True


def _bools(values: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=bool)
