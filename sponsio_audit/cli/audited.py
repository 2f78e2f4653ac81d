"""A store holding an audit, for the commands that read one: from PATHs or a stored ``--db``.

With PATHs the traces are read into an in-memory store and audited (the
database file is never touched); with ``--db`` the stored audit is opened
read-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sponsio_audit.cli import contracts as contract_sources
from sponsio_audit.cli import stores
from sponsio_audit.cli.common import UsageProblem, check_inputs, own_pyarrow, say_warning

PathsArg = Annotated[list[Path] | None, typer.Argument(help="Trace files or directories.")]
"""The trace inputs of a command that reads an audit (or ``--db`` instead)."""
ReadDbOpt = Annotated[
    Path | None, typer.Option("--db", help="Read a stored audit (read-only) instead of PATHs.")
]
"""A stored audit to read instead of PATHs, opened read-only."""


def open_audit(
    paths: list[Path],
    db: Path | None,
    contract_files: list[Path],
    packs: list[str],
    *,
    group_by: str = "trace",
    agent: str | None = None,
    jobs: int = 0,
) -> Any:
    """A store with events, verdicts, violations and contracts (the caller closes it)."""
    if paths and db is not None:
        raise UsageProblem(["give trace PATHs or --db FILE, not both"])
    if not paths and db is None:
        raise UsageProblem(["give trace PATHs, or --db FILE of a stored audit"])
    if db is not None:
        store = stores.read_only(db)
        tell_skipped(store, f"sponsio-audit report --db {db} lists them")
        return store
    check_inputs(paths)
    own_pyarrow()
    from sponsio_audit.api import audit

    cfg, src = contract_sources.load(contract_files, packs)
    sources: list[str | Path] = [str(p) for p in paths]
    store = audit(sources, cfg, group_by=group_by, agent=agent, jobs=jobs, sources=src.items).store
    tell_skipped(store, "`sponsio-audit scan` lists them all")
    return store


SKIPPED_SHOWN = 10
"""Skipped input records ``tell_skipped`` names one by one, before it counts the rest."""


def tell_skipped(store: Any, where: str) -> None:
    """Name on stderr the input records the audit skipped (file, record, reason; the first
    ``SKIPPED_SHOWN``, then a count): a listing of the traces left must not look complete.
    ``where`` says where the whole list is."""
    if not has_table(store, "skipped"):
        return
    cur = store.con.cursor()
    rows = cur.execute(
        "SELECT coalesce(f.path, '?'), s.record, s.reason FROM skipped s "
        "LEFT JOIN files f USING (file_id) ORDER BY s.file_id, s.record LIMIT ?",
        [SKIPPED_SHOWN],
    ).fetchall()
    if not rows:
        return
    ((n,),) = cur.execute("SELECT count(*) FROM skipped").fetchall()
    for path, record, reason in rows:
        at = "" if not record else f": record {record}"  # record 0: the whole file
        say_warning(f"{path}{at}: skipped: {reason}")
    more = f" ({n - len(rows)} more not shown; {where})" if n > len(rows) else ""
    say_warning(f"{n} input record(s) skipped: their spans are in no trace here{more}")


def has_table(store: Any, name: str) -> bool:
    """Whether the store holds table ``name``."""
    rows = (
        store.con.cursor()
        .execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name])
        .fetchall()
    )
    return bool(rows and rows[0][0])


def rows(store: Any, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """The rows of a parameterised query as dicts."""
    cur = store.con.cursor().execute(sql, params or [])
    names = [d[0] for d in cur.description or ()]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def find_trace(store: Any, wanted: str) -> str:
    """The trace ``wanted`` names: its id, or a unique case-insensitive prefix of it."""
    found = rows(
        store,
        "SELECT DISTINCT trace_id FROM events WHERE starts_with(lower(trace_id), lower(?)) "
        "ORDER BY 1 LIMIT 6",
        [wanted],
    )
    ids = [str(r["trace_id"]) for r in found]
    exact = [t for t in ids if t.lower() == wanted.lower()]
    if len(exact) == 1:
        return exact[0]
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise UsageProblem(
            [
                f"unknown trace {wanted!r}: no trace id starts with it "
                "(`sponsio-audit traces` lists them)"
            ]
        )
    shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
    raise UsageProblem([f"ambiguous trace {wanted!r}: it starts {shown}; give more characters"])
