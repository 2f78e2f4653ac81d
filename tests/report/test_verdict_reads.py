"""A report from the audit's own verdicts equals the report from the stored ones.

``scan`` without ``--db`` or ``--parquet`` keeps its verdicts and violations in memory
only (``api.audit(lean=True)``); ``report.data.load`` then counts and lists them from
the Arrow tables (``report/verdict_reads.py``) instead of querying the store. Every
format must come out the same as from a store that holds them, on corpora with every
verdict (the demo and handwritten corpora pass, violate and are not applicable;
``conftest.undecided_corpus`` is unverifiable and skipped).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sponsio_audit import audit
from sponsio_audit.config import load_config
from sponsio_audit.report.data import arrow, load

from .conftest import REPO, run, undecided_corpus

HAND = REPO / "fixtures" / "handwritten"
DEMO = REPO / "fixtures" / "demo"
CORPORA = ("demo", "handwritten", "undecided")
FORMATS = ("json", "markdown", "html", "junit", "sarif", "table")


def _corpus(name: str, tmp: Path) -> tuple[Path, Path]:
    """(traces, sponsio.yaml) of a corpus."""
    if name == "undecided":
        return undecided_corpus(tmp)
    base = DEMO if name == "demo" else HAND
    return base / "traces", base / "sponsio.yaml"


@pytest.mark.parametrize("name", CORPORA)
def test_the_report_data_is_the_same_from_memory_as_from_the_store(
    name: str, tmp_path: Path
) -> None:
    traces, config = _corpus(name, tmp_path)
    cfg = load_config([config])
    kept = audit([traces], cfg, command=["t"])
    lean = audit([traces], cfg, command=["t"], lean=True)
    try:
        for table in ("verdicts", "violations"):  # the types a stored copy comes back with
            stored = arrow(kept.store, f"SELECT * FROM {table}")
            assert lean.table(table).schema == stored.schema, table
            assert lean.table(table).equals(stored), table
        counted = lean.summary.verdicts
        if name == "undecided":  # the corpus exercises the undecided list
            assert counted["unverifiable"] > 0 and counted["skipped"] > 0
        else:
            assert counted["violated"] > 0 and counted["not_applicable"] > 0
        for junit in (False, True):
            a = load(kept.store, timelines=True, verdict_rows=junit)
            b = load(
                lean.store,
                timelines=True,
                verdict_rows=junit,
                violations=lean.violations,
                verdicts=lean.verdicts,
                totals=lean.summary,
            )
            assert b.counts_by_contract == a.counts_by_contract
            assert b.undecided == a.undecided
            assert b.verdict_rows == a.verdict_rows
            assert len(b.verdict_rows) == (sum(lean.summary.verdicts.values()) if junit else 0)
            assert b.per_contract == a.per_contract
            assert b.violation_table.equals(a.violation_table)
            assert b.totals == a.totals and b.events == a.events
    finally:
        kept.store.close()
        lean.store.close()


def test_a_lean_store_without_the_tables_is_refused_by_name() -> None:
    """``load`` of a lean store without the audit's tables: a clear error, not a report of
    nothing (which would read as a clean pass)."""
    res = audit([DEMO / "traces"], load_config([DEMO / "sponsio.yaml"]), lean=True)
    try:
        with pytest.raises(LookupError, match="verdicts"):
            load(res.store, timelines=False)
    finally:
        res.store.close()


def _without_provenance(fmt: str, text: str, db: Path) -> str:
    """The report with what differs between the two runs cut out: the provenance (time,
    command line) and the database path the second run was given."""
    if fmt == "json":
        doc = json.loads(text)
        doc.pop("provenance")
        return json.dumps(doc, sort_keys=True)
    if fmt == "sarif":
        doc = json.loads(text)
        for r in doc["runs"]:
            r.pop("invocations", None)
            r.get("properties", {}).pop("provenance", None)
        return json.dumps(doc, sort_keys=True)
    text = text.replace(str(db), "DB")
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)


@pytest.mark.parametrize("name", CORPORA)
def test_scan_in_memory_writes_the_reports_a_database_scan_writes(
    name: str, tmp_path: Path
) -> None:
    traces, config = _corpus(name, tmp_path)
    db = tmp_path / "a.duckdb"
    got: dict[str, dict[str, str]] = {}
    for where, extra in (("memory", []), ("db", ["--db", db])):
        outs = [tmp_path / f"{where}.{fmt}" for fmt in FORMATS]
        for fmt, out in zip(FORMATS, outs, strict=True):
            res = run("scan", traces, "-c", config, "-f", fmt, "-o", out, "-q",
                      "--fail-on", "none", *extra)  # fmt: skip
            assert res.exit_code == 0, res.output
        got[where] = {
            fmt: _without_provenance(fmt, o.read_text(encoding="utf-8"), db)
            for fmt, o in zip(FORMATS, outs, strict=True)
        }
    for fmt in FORMATS:
        assert got["memory"][fmt] == got["db"][fmt], fmt
    summary = json.loads((tmp_path / "memory.json").read_text())["summary"]
    assert summary["contracts"] > 0 and summary["traces"] > 0
