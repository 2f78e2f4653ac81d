"""Where worker processes cannot run, ``--jobs 2`` reads in the scan's own process.

A worker pool needs POSIX semaphores, which live in ``/dev/shm``; a hardened
container mounts it read-only (or has none), and the pool then cannot even be made
(``OSError: [Errno 30] Read-only file system``). Measured with a read-only tmpfs over
``/dev/shm``: ``scan --jobs 2`` failed with ``error: Read-only file system`` and no
report. The semaphore's refusal is simulated here (the OS call is what differs); the
pool, the scan and its report are real.
"""

from __future__ import annotations

import errno
import json
import multiprocessing.synchronize
import os
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.ingest import workers
from sponsio_audit.ingest.workers import Workers
from tests.cli.conftest import TRACES, json_scan


def _pid(i: int) -> tuple[int, int]:
    return i, os.getpid()


def _refuse(*_args: Any, **_kwargs: Any) -> None:
    raise OSError(errno.EROFS, "Read-only file system")  # what sem_open gave on /dev/shm ro


@pytest.fixture
def no_semaphores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(multiprocessing.synchronize.SemLock, "__init__", _refuse)


@pytest.mark.usefixtures("no_semaphores")
def test_without_semaphores_the_items_are_mapped_here() -> None:
    assert "Read-only file system" in (workers.cannot_start() or "")
    for inline in (True, False):
        with Workers(2, start_inline=inline) as w:
            got = list(w.map(_pid, range(6)))
            again = list(w.map(_pid, range(2)))  # pass 2 of the same ingest
        assert got == [(i, os.getpid()) for i in range(6)]
        assert again == [(0, os.getpid()), (1, os.getpid())]
        assert w.unavailable is not None and "Read-only file system" in w.unavailable


def test_scan_jobs_2_without_semaphores_warns_and_reports_as_jobs_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, want = json_scan(TRACES, tmp_path / "one.json", "1")
    monkeypatch.setattr(multiprocessing.synchronize.SemLock, "__init__", _refuse)
    two, got = json_scan(TRACES, tmp_path / "two.json", "2")
    assert two.exit_code == one.exit_code and one.exit_code in (0, 1)
    assert got == want and want["summary"]["spans"] > 0
    said = [ln for ln in two.stderr.splitlines() if "cannot run here" in ln]
    assert len(said) == 1
    assert said[0].startswith("warning: --jobs 2: worker processes cannot run here: Read-only")
    kept = json.loads((tmp_path / "two.json").read_bytes())["provenance"]["warnings"]
    assert kept == [said[0][len("warning: ") :]]  # in the report too, for a job reading it
    assert "Traceback" not in two.stderr and "error:" not in two.stderr
