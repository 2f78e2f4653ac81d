"""The violations array of many rows (``jsonarrays``) is still the text of the per-row dicts.

With hundreds of rows, columns of few distinct values are joined to the literals beside
them and to each other (``Layout.grid``), the entry columns are encoded once for all rows
and the JSON array is written on two threads' encodings (``PARALLEL_ROWS`` lowered here):
the random groups of ``test_jsonarrays`` copied into many traces, with odd strings and
nulls kept, must still give the bytes of ``jsonenc.dumps``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.report import jsonarrays, jsonenc, jsonfmt
from sponsio_audit.report.xmlchars import legal
from tests.report.test_jsonarrays import MAYBE, _data, groups


@settings(max_examples=60, deadline=None)
@given(groups(), st.integers(20, 120), st.none() | st.lists(MAYBE, min_size=3, max_size=3))
def test_many_rows_write_the_bytes_of_the_rows(
    rows: list[dict[str, Any]], copies: int, matched: list[str | None] | None
) -> None:
    many = [
        {**r, "trace_id": f"{r['trace_id']}#{i % 7}" if i % 3 else r["trace_id"]}
        for i in range(copies)
        for r in rows
    ]
    # keep (trace, contract, guarantee) groups apart: one copy per trace suffix
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for r in many:
        key = (r["trace_id"], r["contract_id"], r["guarantee"], r["seq"], r["blamed"])
        if key not in seen:
            seen.add(key)
            kept.append(r)
    data = _data(kept, None if matched is None else (matched * 400)[: len(kept)])
    default = jsonarrays.PARALLEL_ROWS
    jsonarrays.PARALLEL_ROWS = 1
    try:
        got = jsonfmt.render(data)
    finally:
        jsonarrays.PARALLEL_ROWS = default
    assert got == legal(jsonenc.dumps(jsonfmt.document(data))) + "\n"
