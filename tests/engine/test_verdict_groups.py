"""Violations with equal (contract, guarantee, kind, tool, opened step, opened tool) share
one evidence template: ``verdicts.group_rows`` must group exactly the rows whose values are
equal (nulls equal only to nulls), number groups by first appearance and name each
group's first row, for string, dictionary and integer columns alike."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.verdicts import group_rows

_TEXT = st.one_of(st.none(), st.sampled_from(["", "a", "b", "a\ue002b", "\ue001"]))
_INT = st.one_of(st.none(), st.integers(-(2**40), 2**40), st.sampled_from([0, 1, -1]))


@settings(max_examples=300)
@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(
            st.lists(_TEXT, min_size=n, max_size=n),
            st.lists(_INT, min_size=n, max_size=n),
            st.lists(_TEXT, min_size=n, max_size=n),
        )
    )
)
def test_group_rows_are_the_rows_with_equal_values(cols):
    texts, ints, more = cols
    arrays = [
        pa.array(texts, pa.string()),
        pa.array(ints, pa.int64()),
        pa.array(more, pa.string()).dictionary_encode(),
        pa.chunked_array([pa.array(ints, pa.int64())]),
    ]
    group, first = group_rows(arrays)
    rows = list(zip(texts, ints, more, ints, strict=True))
    seen: dict[tuple, int] = {}
    for r in rows:
        seen.setdefault(r, len(seen))
    assert group.tolist() == [seen[r] for r in rows]
    assert first.to_pylist() == [rows.index(r) for r in seen]
