"""``api.audit`` is the one writer of the audit tables, and its summary is the reports' totals.

Expected counts come from the demo generator (``fixtures/make_demo.py``
lists what it plants) and from the loaded configuration, not from the audit.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from sponsio_audit.api import audit, summary
from sponsio_audit.config import load_config
from sponsio_audit.ingest import Store
from sponsio_audit.report.data import load

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo"


def _planted() -> list[tuple[str, str, str]]:
    spec = importlib.util.spec_from_file_location("make_demo", REPO / "fixtures" / "make_demo.py")
    assert spec and spec.loader
    demo = importlib.util.module_from_spec(spec)
    sys.modules["make_demo"] = demo
    spec.loader.exec_module(demo)
    return list(demo.PLANTED)


def test_a_library_audit_can_be_reported_from_its_store(tmp_path: Path) -> None:
    cfg = load_config([DEMO / "sponsio.yaml"])
    db = tmp_path / "audit.duckdb"
    audit([DEMO / "traces"], cfg, db=db).store.close()
    store = Store.open(db)
    try:
        data = load(store, timelines=False)  # needs the contracts table audit() wrote
        stored = summary(store)
    finally:
        store.close()
    assert [c["id"] for c in data.contracts] == sorted(c.id for c in cfg.contracts)
    assert stored.contracts == len(cfg.contracts)
    assert stored.violations == data.totals["violations"] == len(_planted())
    assert data.verdict_counts == stored.verdicts
    for key in ("files", "records", "spans", "events", "skipped", "traces", "contracts"):
        assert data.totals[key] == getattr(stored, key), key
    skipped = sum(1 for c in cfg.contracts for g in c.guarantees if g.skipped is not None)
    assert stored.skipped_clauses == skipped


def test_totals_counted_in_arrow_are_the_stored_ones(tmp_path: Path) -> None:
    """``audit``'s summary counts verdicts, kinds and severities on the tables it just stored
    (Arrow); read back from the store they are the same, on corpora with every verdict."""
    hand = REPO / "fixtures" / "handwritten"
    for traces, config in (
        (DEMO / "traces", DEMO / "sponsio.yaml"),
        (hand / "traces", hand / "sponsio.yaml"),
    ):
        result = audit([traces], load_config([config]))
        try:
            assert result.summary == summary(result.store)
            assert sum(result.summary.verdicts.values()) == result.verdicts.num_rows
        finally:
            result.store.close()


def test_counts_of_a_table_whose_parts_have_different_dictionaries() -> None:
    """A verdict table with traces that have no events is two tables concatenated: their
    dictionary columns differ (``group_by`` refused that, ArrowNotImplementedError)."""
    import pyarrow as pa

    from sponsio_audit.verdicts import count_by

    part = [pa.array(v).dictionary_encode() for v in (["pass", "violated"], ["x", "pass", None])]
    table = pa.Table.from_arrays([pa.chunked_array(part)], names=["verdict"])
    assert count_by(table, "verdict", ("violated", "pass")) == {
        "violated": 1,
        "pass": 2,
        "x": 1,
        "None": 1,
    }
