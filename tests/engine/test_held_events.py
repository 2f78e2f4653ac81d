"""``api.audit`` of paths evaluates the events ingest kept in memory (``ingest``'s ``on_events``)
only when they are the whole ``events`` table: its verdicts and violations equal those of an
audit of the same store read back, whatever mix of inputs the run had."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import load_config
from sponsio_audit.ingest import Store, ingest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo" / "traces"
HAND = REPO / "fixtures" / "handwritten"

CASES = {
    "otlp": [DEMO],
    "otlp and native traces": [DEMO, HAND / "traces"],
    "native traces": [HAND / "traces"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_events_held_from_ingest_are_audited_as_the_stored_ones(case: str) -> None:
    cfg = load_config([HAND / "sponsio.yaml"])
    fresh = audit(CASES[case], cfg)
    stored = audit(fresh.store, cfg)  # the same store: its events read back from DuckDB
    try:
        assert fresh.verdicts.num_rows == stored.verdicts.num_rows > 0
        assert fresh.verdicts.equals(stored.verdicts)
        assert fresh.violations.equals(stored.violations)
    finally:
        fresh.store.close()


def test_a_run_that_wrote_only_pass_one_events_holds_them_all() -> None:
    """The OTLP demo: every event comes from pass 1, so the run holds them (the audit above
    then reads no event back); with native traces beside it, it holds none."""
    for paths, held in (([DEMO], True), ([DEMO, HAND / "traces"], False)):
        store = Store.open(None)
        try:
            told: list[pa.Table] = []
            ingest(paths, store, on_events=told.append)
            assert len(told) == held
            for table in told:
                rows = store.con.sql("SELECT * FROM events").to_arrow_table()
                assert table.cast(rows.schema).equals(rows)
        finally:
            store.close()
