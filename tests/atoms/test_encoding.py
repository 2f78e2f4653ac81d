"""The columnar grounding's string codes: every row's code names its own value.

The event ``type`` column is encoded against the known event types (a lookup,
cheaper than hashing) and by hashing when some value is not one of them; either
way a row must read back as exactly its recorded string.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.atoms.columns import Columns, select
from sponsio_audit.event import EVENT_TYPES

TYPES = st.sampled_from([*EVENT_TYPES, "tool_calls", "Tool_call", "", "custom"])


@settings(max_examples=60, deadline=None)
@given(st.lists(TYPES, min_size=1, max_size=40), st.lists(st.sampled_from(["a", "b", None])))
def test_codes_read_back_as_each_rows_value(types: list[str], tools: list[str | None]) -> None:
    n = len(types)
    tools = (tools + [None] * n)[:n]
    table = pa.table({"trace_id": ["t"] * n, "type": types, "tool": pa.array(tools, pa.string())})
    g = Columns(table)
    for name, values in (("type", types), ("tool", tools)):
        enc = g.encoded(name)
        got = [([*enc.values, None])[c] for c in enc.codes.tolist()]
        assert got == values
    for kind in set(types) | {"tool_call"}:
        assert g.is_type(kind).tolist() == [t == kind for t in types]


@settings(max_examples=200)
@given(
    st.sampled_from([np.int8, np.int16, np.int32]),
    st.lists(st.tuples(st.booleans(), st.integers(-(2**7), 2**7 - 1)), max_size=50),
    st.integers(0, 2**7 - 1),
)
def test_select_is_where(dtype: Any, rows: list[tuple[bool, int]], fill: int) -> None:
    """``columns.select`` (codes by arithmetic) gives np.where's codes, edge values too."""
    mask = np.array([m for m, _ in rows], dtype=bool)
    codes = np.array([c for _, c in rows], dtype=dtype)
    got = select(mask, codes, fill)
    assert got.dtype == codes.dtype
    assert got.tolist() == np.where(mask, codes, codes.dtype.type(fill)).tolist()
