"""Opening the DuckDB store for a command: fresh, replacing, appending, or read-only.

``scan --db FILE`` on an existing store replaces the audit stored there
(``--append`` adds the new inputs to it instead); ``report --db`` and
``explain --db`` open the file read-only, so they never change it. A file
that is not a DuckDB database is never overwritten: it is an error.

A replacing scan builds its store in a file beside ``FILE`` (``ScanStore.part``) and
renames it over ``FILE`` once the verdicts are stored (``finished``): until then
``FILE`` holds the audit it had, unchanged and readable, and a scan that stops
(Ctrl-C, SIGTERM, an error) removes its part (``ScanStore.discard``). An appending
scan changes ``FILE`` itself, marked ``UNFINISHED`` meanwhile.
"""

from __future__ import annotations

import os
import shutil
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sponsio_audit.cli.common import UsageProblem, prepare_output

UNFINISHED = "_sponsio_audit_scan_unfinished"
"""A table that ``scan --db`` creates before it changes the store and drops once the
audit is stored whole: a store that still has it holds a scan that was interrupted
(files loaded, verdicts not yet written), which ``report`` and ``explain`` refuse to
show as an audit (its new traces would read as clean). A replacing scan's part has it
too, so that a part left by a scan killed outright (SIGKILL) is no audit either."""


@dataclass(frozen=True)
class ScanStore:
    """Where ``scan`` keeps its store: nowhere (no ``--db``), ``db`` itself (``--append``),
    or ``part``, a file beside ``db`` (``db``'s target when it is a symbolic link) that
    ``finished`` renames over it."""

    db: Path | None = None
    part: Path | None = None

    @property
    def path(self) -> Path | None:
        """The file the scan writes."""
        return self.part if self.part is not None else self.db

    def own_files(self) -> list[Path]:
        """The database files the scan writes or replaces (never read as its inputs)."""
        return [p for p in (self.db, self.part) if p is not None]

    def discard(self) -> None:
        """Remove ``part`` and what DuckDB keeps beside it (its write-ahead log, its spill
        folder), if there: the scan stopped before ``finished``."""
        if self.part is None:
            return
        for name in (self.part, _wal(self.part)):
            with suppress(FileNotFoundError):
                os.unlink(name)
        shutil.rmtree(f"{self.part}.tmp", ignore_errors=True)


def _wal(path: Path | str) -> str:
    return f"{path}.wal"


def prepare_for_scan(db: Path | None, append: bool) -> ScanStore:
    """Make ``db`` ready for a scan: its folder created; with ``append`` marked
    ``UNFINISHED``, else left as it is and a part made beside it (``ScanStore``); an error
    naming it when it is a folder or not a DuckDB database."""
    if db is None:
        return ScanStore()
    if db.is_dir():
        raise UsageProblem([f"{db}: is a folder, a DuckDB file is needed here"])
    import duckdb

    if not db.exists():
        prepare_output(db)
    mark = f"CREATE TABLE IF NOT EXISTS {UNFINISHED} (began TIMESTAMP)"
    if append:
        con = duckdb.connect(str(db))  # a file that is not a DuckDB database fails here, untouched
        try:
            con.execute(mark)
        finally:
            con.close()
        return ScanStore(db)
    if db.exists():  # read-only: not changed, and reports reading it meanwhile go on
        duckdb.connect(str(db), read_only=True).close()
    target = Path(os.path.realpath(db))
    where = ScanStore(db, target.with_name(f"{target.name}.partial-{os.getpid()}"))
    where.discard()  # left by a process that had this one's id and was killed
    try:
        con = duckdb.connect(str(where.part))
        try:
            con.execute(mark)
        finally:
            con.close()
    except BaseException:
        where.discard()
        raise
    return where


def finished(store: Any, where: ScanStore) -> Any:
    """Mark the store's audit whole (``UNFINISHED`` dropped): after its verdicts are stored.
    A replacing scan's part is then written out whole (checkpointed, closed) and renamed
    over ``db``: the store returned is ``db`` opened again (``store`` is closed)."""
    store.con.execute(f"DROP TABLE IF EXISTS {UNFINISHED}")
    if where.part is None or where.db is None:
        return store
    store.con.execute("CHECKPOINT")
    store.close()
    part, target = where.part, Path(os.path.realpath(where.db))
    if os.path.exists(_wal(part)):
        raise UsageProblem(
            [f"{where.db}: the new store could not be written whole; the stored one is unchanged"]
        )
    if target.exists():
        os.chmod(part, target.stat().st_mode & 0o7777)
    os.replace(part, target)
    with suppress(FileNotFoundError):  # the old store's log (DuckDB refuses it with the new)
        os.unlink(_wal(target))
    import duckdb

    from sponsio_audit.ingest import Store

    return Store(duckdb.connect(str(target)), str(where.db))


def read_only(db: Path) -> Any:
    """``db`` opened read-only (an error naming it when missing or not a DuckDB store)."""
    import duckdb

    from sponsio_audit.ingest import Store

    if not db.exists():
        raise UsageProblem([f"{db}: no such file"])
    if db.is_dir():
        raise UsageProblem([f"{db}: is a folder, a DuckDB file is needed here"])
    con = duckdb.connect(str(db), read_only=True)
    unfinished = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [UNFINISHED]
    ).fetchall()[0][0]
    if unfinished:
        con.close()
        raise UsageProblem(
            [
                f"{db}: its last scan did not finish (interrupted): files were loaded but not"
                " all audited, so it is no audit to report; run the scan again"
            ]
        )
    return Store(con, str(db))
