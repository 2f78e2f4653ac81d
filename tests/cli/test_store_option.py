"""``scan --db`` replaces a stored audit (``--append`` adds); ``explain --db`` never writes."""

from __future__ import annotations

import hashlib
import json
import os
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


def _report(db: Path) -> dict[str, object]:
    r = cli("report", "--db", db, "-f", "json")
    assert r.exit_code == 0, r.stderr
    doc: dict[str, object] = json.loads(r.stdout)
    return doc


def test_scan_db_replaces_the_stored_audit(db: Path) -> None:
    assert _trace_ids(db) == _ids(demo.SUPPORT_TRACES)
    db.chmod(0o640)
    assert cli("scan", WORKFLOW, "-c", CONFIG, "--db", db, "-q").exit_code == 1
    assert os.listdir(db.parent) == [db.name]  # the new store was renamed over the old one
    assert db.stat().st_mode & 0o777 == 0o640
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


def test_an_appending_scan_interrupted_leaves_no_audit(db: Path) -> None:
    """Ctrl-C after a scan's files were loaded and committed, before their verdicts were
    stored: with ``--append`` the store then held the new traces beside the old verdicts,
    and ``report`` showed the new traces as clean (a wrong pass). Such a store is refused
    by ``report``, ``explain`` and ``traces`` with one line saying why (exit 2), until a
    scan finishes on it."""
    flags = ["--append"]
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


def test_a_replacing_scan_interrupted_leaves_the_stored_audit(db: Path) -> None:
    """Ctrl-C once a replacing scan's files were loaded, before their verdicts were stored:
    the scan had dropped the stored audit first, so the user was left with none (refused as
    unfinished). The new store is built beside the old one and renamed over it only once
    whole: the old audit is still there, unchanged, and nothing is left beside it."""
    before = _report(db)
    args = ["scan", str(WORKFLOW), "-c", str(CONFIG), "--db", str(db), "-q"]
    run = subprocess.run([sys.executable, "-c", _INTERRUPTED, *args], capture_output=True)
    assert run.returncode == 130, run.stderr
    assert b"Traceback" not in run.stderr
    assert _report(db) == before
    assert _trace_ids(db) == _ids(demo.SUPPORT_TRACES)
    assert os.listdir(db.parent) == [db.name]


def test_a_replacing_scan_clears_a_part_left_under_its_own_process_id(db: Path) -> None:
    """A part (and its write-ahead log) left by a killed process that had this one's id."""
    part = db.with_name(f"{db.name}.partial-{os.getpid()}")  # the scan runs in this process
    part.write_bytes(b"not a store")
    Path(f"{part}.wal").write_bytes(b"not a log")
    assert cli("scan", WORKFLOW, "-c", CONFIG, "--db", db, "-q").exit_code == 1
    assert _trace_ids(db) == _ids(demo.WORKFLOW_TRACES)
    assert os.listdir(db.parent) == [db.name]


def test_a_part_left_by_a_killed_scan_is_no_audit(db: Path) -> None:
    """A scan killed outright (SIGKILL) leaves its part: ``report`` on it refuses it, as an
    interrupted store, whatever it holds."""
    from sponsio_audit.cli import stores

    where = stores.prepare_for_scan(db, append=False)
    assert where.part is not None and where.part.exists()
    r = cli("report", "--db", where.part)
    assert r.exit_code == 2 and "its last scan did not finish" in r.stderr
    where.discard()
    assert os.listdir(db.parent) == [db.name]


@pytest.mark.parametrize("append", [False, True])
def test_a_folder_holding_the_scans_database_reads_none_of_its_files(
    tmp_path: Path, append: bool
) -> None:
    """``scan traces/ --db traces/audit.duckdb``, run again (nightly): the database being
    replaced, the part beside it and their write-ahead logs were read as inputs, listed as
    skipped unrecognised files (names with a process id), so ``--strict`` failed (exit 3)."""
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / SUPPORT.name).write_bytes(SUPPORT.read_bytes())
    store = folder / "audit.duckdb"
    args = ["scan", folder, "-c", CONFIG, "--db", store, "--fail-on", "none", "-q"]
    for _ in range(2):  # the second run finds the first one's database in the folder
        r = cli(*args, *(["--append"] if append else []))
        assert r.exit_code == 0, r.stderr
    report = _report(store)
    inputs = report["inputs"]
    assert isinstance(inputs, dict)
    assert {f["path"] for f in inputs["files"]} == {str(folder / SUPPORT.name)}
    reasons = [s["reason"] for s in inputs["skipped"]]
    assert len(reasons) == append  # appending the same file again: a duplicate, no more
    assert all(r.startswith("duplicate of") for r in reasons), reasons
