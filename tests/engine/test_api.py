"""``api.audit`` end to end on real files: both engines, a persisted DuckDB store.

The demo corpus is produced by the real OpenTelemetry SDK (fixtures/make_demo.py);
what it plants is listed there, so the expectations below come from the generator,
not from running the audit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

from sponsio_audit.api import audit
from sponsio_audit.config import load_config

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo"


def _rows(table):
    return sorted(table.to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


def test_engines_agree_on_the_demo_corpus():
    cfg = load_config([DEMO / "sponsio.yaml"])
    col = audit([DEMO / "traces"], cfg, engine="columnar")
    ref = audit([DEMO / "traces"], cfg, engine="reference")
    assert _rows(col.verdicts) == _rows(ref.verdicts)
    assert _rows(col.violations) == _rows(ref.violations)
    assert col.summary == ref.summary


def test_totals_add_up_and_every_planted_violation_is_found():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_demo", REPO / "fixtures" / "make_demo.py")
    assert spec and spec.loader
    demo = importlib.util.module_from_spec(spec)
    sys.modules["make_demo"] = demo  # its dataclasses look their module up
    spec.loader.exec_module(demo)
    cfg = load_config([DEMO / "sponsio.yaml"])
    res = audit([DEMO / "traces"], cfg)
    s = res.summary
    # the metrics file is skipped whole, with its reason, and counted
    assert s.skipped >= 1
    skipped = res.table("skipped").to_pylist()
    assert any("metrics" in r["reason"] for r in skipped)
    # one violation (blamed row) per planted rule break
    blamed = res.violations.filter(res.violations.column("blamed"))
    assert blamed.num_rows == len(demo.PLANTED)
    assert {r["contract_id"] for r in blamed.to_pylist()} == {p[1] for p in demo.PLANTED}
    assert s.verdicts["violated"] == len(demo.PLANTED)


def test_persisted_store_holds_the_audit(tmp_path):
    db = tmp_path / "audit.duckdb"
    cfg = load_config([DEMO / "sponsio.yaml"])
    res = audit([DEMO / "traces"], cfg, db=db)
    n = res.violations.num_rows
    res.store.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.sql("SELECT count(*) FROM violations").fetchall()[0][0] == n
        assert con.sql("SELECT count(DISTINCT trace_id) FROM verdicts").fetchall()[0][0] == 15
    finally:
        con.close()
