"""The JSON report's violations array written from Arrow columns (``jsonarrays``) is byte
for byte the text of the per-row dicts through ``jsonenc.dumps`` (the stdlib's bytes).

Random violation tables: several (trace, contract, guarantee) groups, each with
zero or more offending rows besides the blamed one (or a lone row with no step),
odd strings in every text column (quotes, backslashes, control characters,
U+2028, U+FFFE/U+FFFF which the report replaces, non-ASCII), null tools, spans,
paths and evidence, huge and negative integers, and a ``matched`` column or none.
The table goes through ``data``'s report ordering as ``load`` does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.report import data as report_data
from sponsio_audit.report import jsonarrays, jsonenc, jsonfmt
from sponsio_audit.report.xmlchars import legal
from sponsio_audit.row_order import report_order
from sponsio_audit.verdicts import VIOLATION_SCHEMA

TEXT = st.text(
    st.one_of(
        st.characters(blacklist_categories=("Cs",)),  # Arrow strings are valid UTF-8
        st.sampled_from('\x00\x1f\x7f\u2028\u2029\ufeff\ufffe\uffff"\\\n\t/é€😀'),
    ),
    max_size=8,
)
MAYBE = st.one_of(st.none(), TEXT)
INTS = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.integers(0, 50))
CONTRACTS = ("a", "b", "c\u00e9")
SEVERITY = {"a": "high", "b": "low", "c\u00e9": "medium"}


def _contract(cid: str) -> dict[str, Any]:
    return {
        "id": cid,
        "agent": "*",
        "description": "",
        "severity": SEVERITY[cid],
        "strategy": "block",
        "safe_tool": None,
        "source": None,
        "file": None,
        "line": None,
        "guarantees": ["G x", "G y"],
        "patterns": ["no_pii", None] if cid == "a" else [None, None],
        "skipped": [None, None],
    }


@st.composite
def groups(draw: Any) -> list[dict[str, Any]]:
    """Rows of the violations table: per group one blamed row and some offending ones."""
    rows: list[dict[str, Any]] = []
    keys = draw(
        st.lists(
            st.tuples(st.sampled_from(["t1", "t2", 'q"t', "t\u2028"]), st.sampled_from(CONTRACTS),
                      st.integers(0, 1)),
            unique=True,
            max_size=6,
        )
    )  # fmt: skip
    for trace, cid, g in keys:
        kind = draw(st.sampled_from(["guarantee", "liveness", "assumption"]))
        severity = "low" if kind == "assumption" else SEVERITY[cid]
        text = draw(MAYBE)
        lone = draw(st.booleans())
        seqs = [None] if lone else draw(st.lists(st.integers(0, 30), min_size=1, max_size=4,
                                                 unique=True))  # fmt: skip
        blamed = 0 if lone else draw(st.integers(0, len(seqs) - 1))
        for i, seq in enumerate(seqs):
            rows.append(
                {
                    "trace_id": trace,
                    "contract_id": cid,
                    "guarantee": g,
                    "guarantee_text": text,
                    "kind": kind,
                    "severity": severity,
                    "strategy": "block",
                    "seq": seq,
                    "blamed": i == blamed,
                    "span_id": draw(MAYBE),
                    "tool": draw(MAYBE),
                    "agent": draw(MAYBE),
                    "evidence": draw(TEXT),
                    "opened_seq": draw(INTS),
                    "file_id": draw(st.none() | st.integers(0, 2)),
                    "record": draw(INTS),
                }
            )
    draw(st.randoms()).shuffle(rows)
    return rows


def _data(rows: list[dict[str, Any]], matched: list[str | None] | None) -> report_data.ReportData:
    table = pa.Table.from_pylist(rows, schema=VIOLATION_SCHEMA)
    files = [{"file_id": 0, "path": "a/b.jsonl"}, {"file_id": 1, "path": 'c"\u00e9\ufffe'}]
    table = report_order(report_data._with_paths(table, files))
    if matched is not None:
        table = table.append_column("matched", pa.array(matched[: table.num_rows], pa.string()))
    contracts = [_contract(c) for c in CONTRACTS]
    return report_data.ReportData(
        totals={"violations": sum(r["blamed"] for r in rows)},
        files=[],
        skipped=[],
        contracts=contracts,
        verdict_counts={},
        per_contract=report_data._per_contract(contracts, {}, table),
        violation_table=table,
    )


@settings(max_examples=150, deadline=None)
@given(
    groups(),
    st.none() | st.lists(MAYBE, min_size=30, max_size=30),
    st.sampled_from([1, 2, 3, 7, 64, jsonarrays.PIECE_BYTES]),
)
def test_columns_write_the_bytes_of_the_rows(
    rows: list[dict[str, Any]], matched: Any, piece: int
) -> None:
    """Also when the array's text is written in pieces of ``piece`` bytes (a real report
    in pieces of ``PIECE_BYTES``, so that only one is held at a time)."""
    data = _data(rows, matched)
    slow = legal(jsonenc.dumps(jsonfmt.document(data))) + "\n"
    default = jsonarrays.PIECE_BYTES
    jsonarrays.PIECE_BYTES = piece
    try:
        assert jsonfmt.render(data) == slow
        pieces = [bytes(c) for c in jsonfmt.chunks(data)]
    finally:
        jsonarrays.PIECE_BYTES = default
    assert all(pieces)  # no empty write
    if piece == 1 and any(r["blamed"] for r in rows):  # the array itself in several pieces
        assert len(pieces) > 5


def test_no_violation_is_an_empty_array() -> None:
    data = _data([], None)
    assert '"violations": [],' in jsonfmt.render(data)
    assert jsonfmt.render(data) == legal(jsonenc.dumps(jsonfmt.document(data))) + "\n"


def test_placeholder_in_trace_content_takes_the_slow_way() -> None:
    """A trace id equal to the placeholder cannot confuse the splice."""
    row = {
        "trace_id": jsonfmt._SLOT,
        "contract_id": "a",
        "guarantee": 0,
        "guarantee_text": "G x",
        "kind": "guarantee",
        "severity": "high",
        "strategy": "block",
        "seq": 1,
        "blamed": True,
        "span_id": None,
        "tool": None,
        "agent": None,
        "evidence": "e",
        "opened_seq": None,
        "file_id": None,
        "record": None,
    }
    data = _data([row], None)
    data = dataclasses.replace(data, provenance={"command": [jsonfmt._SLOT]})
    assert jsonfmt.render(data) == legal(jsonenc.dumps(jsonfmt.document(data))) + "\n"


@settings(max_examples=100, deadline=None)
@given(groups())
def test_per_contract_counts_are_those_of_the_rows(rows: list[dict[str, Any]]) -> None:
    """Each contract's violations (blamed rows), traces violated (distinct traces of its rows)
    and events blamed (its rows), counted from the rows one by one."""
    data = _data(rows, None)
    for entry in data.per_contract:
        mine = [r for r in rows if r["contract_id"] == entry["contract_id"]]
        assert entry["violations"] == sum(1 for r in mine if r["blamed"])
        assert entry["traces_violated"] == len({r["trace_id"] for r in mine})
        assert entry["events_blamed"] == len(mine)
