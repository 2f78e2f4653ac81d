"""``sponsio-audit report``: re-render a stored audit (``scan --db``) without reading traces.

The store is opened read-only: a report never changes it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from sponsio_audit.cli import audited, outputs, stores, summary
from sponsio_audit.cli.common import (
    EXIT_OK,
    EXIT_VIOLATIONS,
    FailOn,
    UsageProblem,
    guarded,
    own_pyarrow,
)
from sponsio_audit.cli.contracts import Sources
from sponsio_audit.cli.scan import FormatOpt, LimitOpt, OutputOpt, QuietOpt, SilentOpt, failing


def _header(store: Any) -> str | None:
    """The ``contracts: …`` line of the stored audit (None for a store written before it)."""
    from sponsio_audit.config import ConfigSource

    if not audited.has_table(store, "sources"):
        return None
    rows = audited.rows(store, "SELECT path, pack, found_by FROM sources")
    items = tuple(ConfigSource(r["path"], r["pack"], r["found_by"]) for r in rows)
    return Sources(items).header() if items else None


def report(
    db: Annotated[
        Path | None, typer.Option("--db", help="DuckDB file written by `scan --db`.")
    ] = None,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Hide known violations.")
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Exit 1 on violations at or above this.")
    ] = FailOn.none,
    limit: LimitOpt = 20,
    quiet: QuietOpt = False,
    silent: SilentOpt = False,
    parquet: Annotated[
        Path | None,
        typer.Option("--parquet", help="Directory written by `scan --parquet` (instead of --db)."),
    ] = None,
) -> None:
    """Re-render a stored audit (`scan --db` or `--parquet`) without reading the traces again.

    Example: sponsio-audit report --db audit.duckdb -f markdown >> "$GITHUB_STEP_SUMMARY"

    Exit codes: 0, or 1 with violations at or above --fail-on (default none);
    2 when the file is missing, is not a DuckDB store or holds no audit.
    """
    own_pyarrow()
    from sponsio_audit.report import baseline as baselines
    from sponsio_audit.report.data import load

    source = db if db is not None else parquet
    with guarded(source):
        if (db is None) == (parquet is None):
            raise UsageProblem(["give --db FILE or --parquet DIR (one of them)"])
        ts = outputs.targets(output or [], fmt.value if fmt else None)
        outputs.check(ts)
        if parquet is not None:
            from sponsio_audit.api import read_parquet

            if not parquet.exists():
                raise UsageProblem([f"{parquet}: no such file or directory"])
            try:
                store = read_parquet(parquet)
            except LookupError as e:
                raise UsageProblem([str(e)]) from None
        else:
            assert db is not None
            store = stores.read_only(db)
        try:
            fmts = {t.fmt for t in ts}
            try:
                data = load(store, timelines="html" in fmts, verdict_rows="junit" in fmts)
            except LookupError as e:
                raise UsageProblem([f"{source}: {e}"]) from None
            data = baselines.with_matches(store, data)
            header = _header(store)
        finally:
            store.close()
        use = None
        if baseline is not None:
            try:
                data, stale = baselines.apply_counted(data, baselines.read(baseline))
            except baselines.BaselineError as e:
                raise UsageProblem([str(e)]) from None
            use = summary.BaselineUse(str(baseline), data.suppressed, stale)
        for t in ts:
            if t.path is None and silent:
                continue
            outputs.write(
                data, t, quiet=quiet or silent, limit=limit, fail_on=fail_on.value, header=header
            )
        if not (quiet or silent):
            sys.stderr.write(summary.line(data, use) + "\n")
    raise typer.Exit(EXIT_VIOLATIONS if failing(data, fail_on.value) else EXIT_OK)
