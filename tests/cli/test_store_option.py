"""``scan --db`` replaces a stored audit (``--append`` adds); ``explain --db`` never writes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
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


_INTERRUPTED = """
import sys
from sponsio_audit import api
def evaluate(*args, **kw):
    raise KeyboardInterrupt  # Ctrl-C once the files are loaded, before any verdict
api.evaluate = evaluate
from sponsio_audit.cli import main
sys.argv = ["sponsio-audit", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("append", [True, False])
def test_a_store_whose_scan_was_interrupted_is_no_audit(db: Path, append: bool) -> None:
    """Ctrl-C after a scan's files were loaded and committed, before their verdicts were
    stored: with ``--append`` the store then held the new traces beside the old verdicts,
    and ``report`` showed the new traces as clean (a wrong pass). Such a store is refused
    by ``report``, ``explain`` and ``traces`` with one line saying why (exit 2), until a
    scan finishes on it."""
    flags = ["--append"] if append else []
    args = ["scan", str(WORKFLOW), "-c", str(CONFIG), "--db", str(db), "-q", *flags]
    run = subprocess.run([sys.executable, "-c", _INTERRUPTED, *args], capture_output=True)
    assert run.returncode == 130, run.stderr
    for command in (["report"], ["explain", "--trace", "a"], ["traces"]):
        r = cli(*command, "--db", db)
        assert r.exit_code == 2, (command, r.stdout)
        assert "its last scan did not finish" in r.stderr and "Traceback" not in r.stderr
    assert cli("scan", WORKFLOW, "-c", CONFIG, "--db", db, "-q", *flags).exit_code == 1
    report = json.loads(cli("report", "--db", db, "-f", "json").stdout)
    assert report["summary"]["traces"] >= len(demo.WORKFLOW_TRACES)
