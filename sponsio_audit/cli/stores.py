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


def prepare_for_scan(db: Path | None, append: bool) -> None:
    """Make ``db`` ready for a scan: its folder created, its stored audit dropped unless
    ``append``; an error naming it when it is a folder or not a DuckDB database."""
    if db is None:
        return
    if db.is_dir():
        raise UsageProblem([f"{db}: is a folder, a DuckDB file is needed here"])
    if not db.exists():
        prepare_output(db)
        return
    import duckdb

    from sponsio_audit.api import STORE_TABLES

    con = duckdb.connect(str(db))  # a file that is not a DuckDB database fails here, untouched
    try:
        if not append:
            for name in STORE_TABLES:
                con.execute(f'DROP TABLE IF EXISTS "{name}"')  # names are constants
    finally:
        con.close()


def read_only(db: Path) -> Any:
    """``db`` opened read-only (an error naming it when missing or not a DuckDB store)."""
    import duckdb

    from sponsio_audit.ingest import Store

    if not db.exists():
        raise UsageProblem([f"{db}: no such file"])
    if db.is_dir():
        raise UsageProblem([f"{db}: is a folder, a DuckDB file is needed here"])
    return Store(duckdb.connect(str(db), read_only=True), str(db))
