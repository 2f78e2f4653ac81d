"""``row_order.report_order`` on the orders it meets: rows as the engines give them (trace,
contract, guarantee, step), rows already in report order (what ``load`` reads back), and
those orders but for one row; each against the Python sort of (severity rank, contract,
trace, guarantee, step with no step first), stable, over several chunks.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit import row_order
from sponsio_audit.report import data as report_data
from sponsio_audit.row_order import report_order
from sponsio_audit.verdicts import VIOLATION_SCHEMA

IDS = st.sampled_from(["a", "b", "B", "é", "a\x00", "aa", "\U0001f600", "", "z"])
ROWS = st.lists(
    st.tuples(
        st.sampled_from(["high", "medium", "low", "weird"]),
        IDS,
        IDS,
        st.integers(0, 2),
        st.none() | st.integers(0, 5),
    ),
    max_size=30,
)


def _rank(v: dict[str, Any]) -> tuple[Any, ...]:
    return (
        report_data.SEVERITY_RANK.get(v["severity"], 9),
        v["contract_id"].encode(),
        v["trace_id"].encode(),
        v["guarantee"],
        v["seq"] if v["seq"] is not None else -1,
    )


def _engine(v: dict[str, Any]) -> tuple[Any, ...]:
    return (
        v["trace_id"].encode(),
        v["contract_id"].encode(),
        v["guarantee"],
        v["seq"] if v["seq"] is not None else -1,
    )


def violation_dicts(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Violation rows (severity, contract, trace, guarantee, seq) as ``VIOLATION_SCHEMA`` dicts."""
    return [
        {
            "trace_id": t,
            "contract_id": c,
            "guarantee": g,
            "guarantee_text": None,
            "kind": "guarantee",
            "severity": sev,
            "strategy": "block",
            "seq": seq,
            "blamed": True,
            "span_id": str(i),
            "tool": None,
            "agent": None,
            "evidence": "e",
            "opened_seq": None,
            "file_id": None,
            "record": None,
        }
        for i, (sev, c, t, g, seq) in enumerate(rows)
    ]


def _table(dicts: list[dict[str, Any]], cuts: list[int]) -> pa.Table:
    """The rows as a table of several chunks (cut at ``cuts``)."""
    edges = sorted({0, len(dicts), *(c for c in cuts if c < len(dicts))})
    parts = [
        pa.Table.from_pylist(dicts[a:b], schema=VIOLATION_SCHEMA)
        for a, b in itertools.pairwise(edges)
    ]
    return pa.concat_tables(parts) if parts else VIOLATION_SCHEMA.empty_table()


@settings(max_examples=200, deadline=None)
@given(
    ROWS,
    st.sampled_from(["engine", "report", "shuffled"]),
    st.lists(st.integers(1, 30), max_size=3),
    st.none() | st.integers(0, 29),
)
def test_report_order_from_the_orders_it_meets(
    rows: list[tuple[Any, ...]], given_order: str, cuts: list[int], moved: int | None
) -> None:
    dicts = violation_dicts(rows)
    if given_order == "engine":
        dicts = sorted(dicts, key=_engine)
    elif given_order == "report":
        dicts = sorted(dicts, key=_rank)
    if moved is not None and moved < len(dicts):  # one row out of its place
        dicts.append(dicts.pop(moved))
    table = _table(dicts, cuts)
    got = report_order(table).column("span_id").to_pylist()
    assert got == [v["span_id"] for v in sorted(dicts, key=_rank)]


@settings(max_examples=100, deadline=None)
@given(ROWS, st.lists(st.integers(1, 30), max_size=3))
def test_columns_taken_on_two_threads_are_the_rows_taken_at_once(
    rows: list[tuple[Any, ...]], cuts: list[int]
) -> None:
    """``_taken`` of a large table (here any: ``PARALLEL_ROWS`` lowered) splits its columns
    between two threads; the table is the one ``Table.take`` gives."""
    table = _table(violation_dicts(rows), cuts)
    order = np.random.default_rng(len(rows)).permutation(table.num_rows)
    default = row_order.PARALLEL_ROWS
    row_order.PARALLEL_ROWS = 1
    try:
        got = row_order._taken(table, order)
    finally:
        row_order.PARALLEL_ROWS = default
    assert got.schema == table.schema
    assert got.to_pylist() == table.take(pa.array(order, pa.int64())).to_pylist()
