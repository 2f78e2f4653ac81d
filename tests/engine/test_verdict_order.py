"""Verdict and violation rows keep the order of sorting their strings, now that the sort
runs on integer ranks (dictionary columns cannot be sorted by Arrow).

``row_order.in_order`` against Arrow's stable ``sort_by`` on the same columns as
plain strings, for random tables whose id columns are dictionary arrays split
in chunks with different dictionaries (a value may repeat within one), plain
strings, or mixed; and the report order of violations (``row_order.report_order``)
against the Python sort it replaced: (severity rank, contract, trace,
guarantee, step with no step first), stable.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.report import data as report_data
from sponsio_audit.row_order import in_order, ranks, report_order
from sponsio_audit.verdicts import TEXT, VIOLATION_SCHEMA

from .test_report_order_paths import IDS, ROWS, violation_dicts


def _text_chunk(values: list[str], dup: bool) -> pa.Array:
    """``values`` as a dictionary array (its dictionary repeats a value when ``dup``)."""
    distinct = list(dict.fromkeys(values))
    dictionary = distinct + distinct[:1] if dup else distinct
    where = {v: i for i, v in enumerate(distinct)}
    idx = [where[v] for v in values]
    if dup and values:  # point the first row at the repeated copy
        idx[0] = len(distinct)
    return pa.DictionaryArray.from_arrays(
        pa.array(idx, pa.int32()), pa.array(dictionary, pa.string())
    )


@st.composite
def tables(draw: Any) -> tuple[pa.Table, list[tuple[str, str, int, int]]]:
    parts = draw(st.lists(st.lists(st.tuples(IDS, IDS, st.integers(0, 3)), max_size=8),
                          min_size=1, max_size=3))  # fmt: skip
    as_text = draw(st.booleans())
    chunks = []
    rows: list[tuple[str, str, int, int]] = []
    for part in parts:
        tids = [t for t, _, _ in part]
        cids = [c for _, c, _ in part]
        gs = [g for _, _, g in part]
        n = len(rows)
        rows += [(t, c, g, n + i) for i, (t, c, g) in enumerate(part)]
        dup = draw(st.booleans())
        chunks.append(
            pa.table(
                {
                    "trace_id": _text_chunk(tids, dup) if as_text else pa.array(tids, pa.string()),
                    "contract_id": _text_chunk(cids, False)
                    if as_text
                    else pa.array(cids, pa.string()),
                    "guarantee": pa.array(gs, pa.int32()),
                    "row": pa.array(range(n, n + len(part)), pa.int64()),
                }
            )
        )
    return pa.concat_tables(chunks), rows


@settings(max_examples=200, deadline=None)
@given(tables())
def test_in_order_sorts_as_the_strings_sort(case: tuple[pa.Table, list[Any]]) -> None:
    table, rows = case
    got = in_order(table).column("row").to_pylist()
    want = [r[3] for r in sorted(rows, key=lambda r: (r[0].encode(), r[1].encode(), r[2]))]
    assert got == want


@settings(max_examples=100, deadline=None)
@given(st.lists(IDS, max_size=20))
def test_ranks_are_dense_and_ordered(values: list[str]) -> None:
    got = ranks(_text_chunk(values, True)) if values else ranks(pa.array([], pa.string()))
    distinct = sorted(set(values), key=str.encode)
    assert got.tolist() == [distinct.index(v) for v in values]


@settings(max_examples=150, deadline=None)
@given(ROWS)
def test_violations_keep_the_report_order(rows: list[tuple[Any, ...]]) -> None:
    dicts = violation_dicts(rows)
    table = pa.Table.from_pylist(dicts, schema=VIOLATION_SCHEMA)
    got = report_order(table).column("span_id").to_pylist()
    rank = report_data.SEVERITY_RANK
    want = sorted(
        dicts,
        key=lambda v: (
            rank.get(v["severity"], 9),
            v["contract_id"],
            v["trace_id"],
            v["guarantee"],
            v["seq"] if v["seq"] is not None else -1,
        ),
    )
    assert got == [v["span_id"] for v in want]


def test_text_is_a_dictionary_of_strings() -> None:
    assert pa.types.is_dictionary(TEXT) and TEXT.value_type == pa.string()
