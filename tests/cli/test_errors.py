"""No traceback, ever: each user or environment problem is one ``error: …`` line naming the path.

``/dev/full`` stands for a full disk (every write fails with ENOSPC) and
``/sys/kernel`` for a folder the user may not write (sysfs refuses new
files even to root).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.conftest import CONFIG, TRACES, cli, proc

FULL = Path("/dev/full")
LOCKED = Path("/sys/kernel/sponsio-audit-test.json")
CI = os.environ.get("CI") == "true"


def _one_error(res: object, path: Path | str) -> str:
    err = getattr(res, "stderr")  # noqa: B009  (Result and CompletedProcess alike)
    code = getattr(res, "exit_code", None)
    code = getattr(res, "returncode", None) if code is None else code
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and str(path) in lines[0]
    return lines[0]


def test_output_folders_are_created(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "audit.json"
    res = cli("scan", TRACES, "-c", CONFIG, "-o", out, "--fail-on", "none")
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["summary"]["traces"] > 0
    parquet = tmp_path / "p" / "q"
    res = cli("scan", TRACES, "-c", CONFIG, "--parquet", parquet, "-q", "--fail-on", "none")
    assert res.exit_code == 0, res.output
    assert (parquet / "violations.parquet").is_file()


def test_file_where_a_folder_is_needed(tmp_path: Path) -> None:
    blocker = tmp_path / "report"
    blocker.write_text("not a folder")
    _one_error(cli("scan", TRACES, "-c", CONFIG, "-o", blocker / "audit.json"), blocker)
    _one_error(cli("scan", TRACES, "-c", CONFIG, "--parquet", blocker), blocker)
    _one_error(cli("scan", TRACES, "-c", CONFIG, "-o", tmp_path), tmp_path)


def test_file_that_is_not_a_duckdb_store_is_not_overwritten(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    line = _one_error(cli("scan", TRACES, "-c", CONFIG, "--db", notes), notes)
    assert "not a DuckDB store" in line
    assert notes.read_text() == "my notes\n"
    _one_error(cli("report", "--db", notes), notes)
    _one_error(cli("explain", "--db", notes, "--trace", "ab"), notes)
    _one_error(cli("report", "--db", tmp_path / "missing.duckdb"), tmp_path / "missing.duckdb")


@pytest.mark.skipif(not LOCKED.parent.is_dir() and not CI, reason="needs Linux sysfs")
def test_permission_denied() -> None:
    line = _one_error(cli("scan", TRACES, "-c", CONFIG, "-o", LOCKED), LOCKED)
    assert "ermission denied" in line or "ead-only" in line


@pytest.mark.skipif(not FULL.exists() and not CI, reason="needs /dev/full")
def test_full_disk() -> None:
    line = _one_error(cli("scan", TRACES, "-c", CONFIG, "-f", "json", "-o", FULL), FULL)
    assert "No space left on device" in line
    _one_error(cli("scan", TRACES, "-c", CONFIG, "--write-baseline", FULL), FULL)
    _one_error(cli("scan", TRACES, "-c", CONFIG, "--db", FULL), FULL)


def test_the_process_prints_no_traceback(tmp_path: Path) -> None:
    """The same problems through the real process (the entry point's own error handling)."""
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    _one_error(proc("scan", TRACES, "-c", CONFIG, "--db", notes), notes)
    if FULL.exists():
        _one_error(proc("scan", TRACES, "-c", CONFIG, "-o", FULL, "-f", "sarif"), FULL)


def test_jobs_past_the_bound_is_a_usage_error() -> None:
    """``--jobs 100000`` started a worker process per job whatever the input (the machine's
    memory filled, the scan killed); ``2**31`` was a traceback. Both are usage errors."""
    from tests.cli.conftest import CONFIG, TRACES, cli

    for n in ("257", "100000", str(2**31)):
        r = cli("scan", TRACES, "-c", CONFIG, "-j", n)
        assert r.exit_code == 2 and "0<=x<=256" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("command", ["scan", "explain"])
def test_a_path_that_cannot_be_opened_says_why(tmp_path: Path, command: str) -> None:
    # a symlink loop was 'no such file or directory', which sends the user looking for a
    # file that is there
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone.jsonl")
    want = {
        "loop1": "a loop of symbolic links",
        "dangling": "a symbolic link to a missing file",
        "absent.jsonl": "no such file or directory",
    }
    for name, why in want.items():
        extra = ["--trace", "x"] if command == "explain" else []
        res = cli(command, tmp_path / name, *extra, "-c", CONFIG)
        assert _one_error(res, tmp_path / name).endswith(f": {why}")
