"""The events pass converts rows between Arrow and Python a slice at a time (memory of a
200k-span trace); where the slices are cut must not change any table."""

from __future__ import annotations

import pytest

from sponsio_audit.ingest import Store, ingest, trace_tables
from tests.conftest import fetched

from .conftest import FIXTURES

TABLES = ("events", "decisions", "traces", "span_facts", "spans")


def _tables(group_by: str) -> dict[str, list[tuple]]:
    store = Store.open(None)
    ingest([FIXTURES / "otel", FIXTURES / "instrumented"], store, group_by=group_by)
    return {t: fetched(store.con, f"SELECT * FROM {t} ORDER BY ALL") for t in TABLES}


@pytest.mark.parametrize("group_by", ["trace", "conversation"])
def test_slices_of_any_size_give_the_same_tables(
    group_by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _tables(group_by)
    assert whole["events"] and whole["decisions"]  # the inputs exercise both outputs
    for rows in (1, 3, 7):
        monkeypatch.setattr(trace_tables, "SLICE_ROWS", rows)
        assert _tables(group_by) == whole
