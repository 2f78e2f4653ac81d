"""Opening the DuckDB store for a command: fresh, replacing, appending, or read-only.

``scan --db FILE`` on an existing store replaces the audit stored there
(``--append`` adds the new inputs to it instead); ``report --db`` and
``explain --db`` open the file read-only, so they never change it. A file
that is not a DuckDB database is never overwritten: it is an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sponsio_audit.cli.common import UsageProblem, prepare_output

UNFINISHED = "_sponsio_audit_scan_unfinished"
"""A table that ``scan --db`` creates before it changes the store and drops once the
audit is stored whole: a store that still has it holds a scan that was interrupted
(files loaded, verdicts not yet written), which ``report`` and ``explain`` refuse to
show as an audit (its new traces would read as clean)."""


def prepare_for_scan(db: Path | None, append: bool) -> None:
    """Make ``db`` ready for a scan: its folder created, its stored audit dropped unless
    ``append``; an error naming it when it is a folder or not a DuckDB database."""
    if db is None:
        return
    if db.is_dir():
        raise UsageProblem([f"{db}: is a folder, a DuckDB file is needed here"])
    import duckdb

    if not db.exists():
        prepare_output(db)

    from sponsio_audit.api import STORE_TABLES

    con = duckdb.connect(str(db))  # a file that is not a DuckDB database fails here, untouched
    try:
        con.execute(f"CREATE TABLE IF NOT EXISTS {UNFINISHED} (began TIMESTAMP)")
        if not append:
            for name in STORE_TABLES:
                con.execute(f'DROP TABLE IF EXISTS "{name}"')  # names are constants
    finally:
        con.close()


def finished(store: Any) -> None:
    """Mark the store's audit whole (``UNFINISHED`` dropped): after its verdicts are stored."""
    store.con.execute(f"DROP TABLE IF EXISTS {UNFINISHED}")


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
