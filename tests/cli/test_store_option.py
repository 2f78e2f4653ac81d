"""``scan --db`` replaces a stored audit (``--append`` adds); ``explain --db`` never writes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.cli.conftest import CONFIG, TRACES, cli, demo

SUPPORT = TRACES / "support_bot.otlp.jsonl"
WORKFLOW = TRACES / "workflow.otlp.jsonl"


def _trace_ids(db: Path) -> set[str]:
    doc = json.loads(cli("traces", "--db", db, "-f", "json").stdout)
    return {t["trace_id"] for t in doc}


def _ids(traces: dict[str, object]) -> set[str]:
    return {demo.trace_id(name) for name in traces}


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "store" / "audit.duckdb"  # the folder is created
    assert cli("scan", SUPPORT, "-c", CONFIG, "--db", path, "-q").exit_code == 1
    return path


def test_scan_db_replaces_the_stored_audit(db: Path) -> None:
    assert _trace_ids(db) == _ids(demo.SUPPORT_TRACES)
    assert cli("scan", WORKFLOW, "-c", CONFIG, "--db", db, "-q").exit_code == 1
    assert _trace_ids(db) == _ids(demo.WORKFLOW_TRACES)
    report = json.loads(cli("report", "--db", db, "-f", "json").stdout)
    assert {f["path"] for f in report["inputs"]["files"]} == {str(WORKFLOW)}
    assert report["summary"]["traces"] == len(demo.WORKFLOW_TRACES)  # none left from before


def test_scan_db_append_adds_to_it(db: Path) -> None:
    assert cli("scan", WORKFLOW, "-c", CONFIG, "--db", db, "--append", "-q").exit_code == 1
    assert _trace_ids(db) == _ids(demo.SUPPORT_TRACES) | _ids(demo.WORKFLOW_TRACES)


def test_explain_and_report_never_write(db: Path) -> None:
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    mtime = db.stat().st_mtime_ns
    tid = demo.trace_id("refund-twice")
    assert cli("explain", "--db", db, "--trace", tid[:8]).exit_code == 0
    assert cli("report", "--db", db, "-f", "json").exit_code == 0
    assert cli("traces", "--db", db).exit_code == 0
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert db.stat().st_mtime_ns == mtime
