"""Worker results through the spool (``ingest.spool``): the same values, nothing left behind.

A user running ``--jobs N`` cares that a result read from shared memory is the
result the worker made, that it stays valid after its file is gone, and that no
file is left in ``/dev/shm`` (memory) after the run, also when the run fails.
"""

from __future__ import annotations

import gc
import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

from sponsio_audit.ingest import spool
from sponsio_audit.ingest.spool import Spool, Spooled, land, ship
from sponsio_audit.ingest.workers import Workers


def _batch(n: int) -> pa.RecordBatch:
    return pa.record_batch(
        {
            "id": pa.array(range(n), pa.int64()),
            "text": pa.array([f"span {i} <b>é</b>" if i % 7 else None for i in range(n)]),
        }
    )


def test_a_large_result_comes_back_equal_from_its_file_after_the_file_is_gone(
    tmp_path: Path,
) -> None:
    big = _batch(100_000)
    shipped = ship((big, "note", {"k": [1, 2]}), str(tmp_path))
    assert isinstance(shipped, tuple) and isinstance(shipped[0], Spooled)
    assert shipped[1] == "note"  # a small part goes the usual way
    back = land(shipped)
    assert list(tmp_path.iterdir()) == []  # its name is removed as it lands
    gc.collect()
    assert back[0].equals(big)
    assert back[1:] == ("note", {"k": [1, 2]})
    buffers = [b for c in back[0].columns for b in c.buffers() if b is not None]
    assert all(b.address % spool.ALIGN == 0 for b in buffers)  # Arrow's alignment kept


def test_a_result_that_cannot_be_written_goes_the_usual_way(tmp_path: Path) -> None:
    big = _batch(100_000)
    gone = tmp_path / "removed"
    assert ship(big, str(gone)) is big  # no directory: no file, the result itself
    assert land(ship(big, str(gone))).equals(big)


def test_a_small_result_never_makes_a_file(tmp_path: Path) -> None:
    small = _batch(10)
    assert ship(small, str(tmp_path)) is small
    assert list(tmp_path.iterdir()) == []


def _big(n: int) -> pa.RecordBatch:
    return _batch(n)


def _fails_at_three(n: int) -> pa.RecordBatch:
    if n == 3:
        raise RuntimeError("boom")
    return _batch(50_000 + n)


def _spool_dirs() -> set[str]:
    base = spool.SHM if os.path.isdir(spool.SHM) else None
    root = Path(base) if base else Path(tempfile.gettempdir())
    # this process's own (the pid is in the name): other runs on the machine make theirs
    return {p.name for p in root.glob(f"{spool.PREFIX}{os.getpid()}-*")}


def test_workers_results_are_the_workers_and_the_spool_is_removed_after() -> None:
    before = _spool_dirs()
    with Workers(2) as w:
        got = list(w.map(_big, [50_000, 60_000, 70_000, 80_000, 90_000]))
    assert [b.num_rows for b in got] == [50_000, 60_000, 70_000, 80_000, 90_000]
    assert all(b.equals(_batch(b.num_rows)) for b in got)
    assert _spool_dirs() == before


def test_a_failing_run_leaves_no_spool_behind() -> None:
    before = _spool_dirs()
    with pytest.raises(RuntimeError, match="boom"), Workers(2) as w:
        for _ in w.map(_fails_at_three, range(8)):
            pass
    assert _spool_dirs() == before


def test_the_spool_directory_is_private() -> None:
    s = Spool.open()
    assert s.directory is not None
    try:
        assert os.stat(s.directory).st_mode & 0o077 == 0
    finally:
        s.close()
    assert not os.path.exists(s.directory)


def test_workers_started_but_never_used_leave_nothing_behind() -> None:
    """The pool starts on entry (so its start overlaps reading the input): an ingest with
    nothing to hand it (an empty directory) still ends at once, with no spool left."""
    before = _spool_dirs()
    with Workers(2):
        pass
    assert _spool_dirs() == before


def test_a_killed_runs_spool_is_removed_by_the_next_run() -> None:
    """A run killed before it could remove its spool leaves memory in /dev/shm; the next
    run removes it, and leaves alone a live process's spool."""
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    root = spool.SHM if os.path.isdir(spool.SHM) else tempfile.gettempdir()
    stale = Path(tempfile.mkdtemp(prefix=f"{spool.PREFIX}{int(dead.stdout)}-", dir=root))
    (stale / "result").write_bytes(b"x" * 1000)
    live = Path(tempfile.mkdtemp(prefix=f"{spool.PREFIX}{os.getppid()}-", dir=root))
    try:
        s = Spool.open()
        s.close()
        assert not stale.exists()
        assert live.exists()
    finally:
        for p in (stale, live):
            if p.exists():
                (p / "result").unlink(missing_ok=True)
                p.rmdir()


def test_without_a_spool_directory_results_still_come_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No room or no right to make the spool (a read-only /dev/shm and temp dir): the
    results go through the pipe, whole, instead of the run failing."""

    def refuse(*_: object, **__: object) -> str:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(spool.tempfile, "mkdtemp", refuse)
    with Workers(2) as w:
        got = list(w.map(_big, [50_000, 60_000]))
    assert [b.num_rows for b in got] == [50_000, 60_000]
    assert all(b.equals(_batch(b.num_rows)) for b in got)
