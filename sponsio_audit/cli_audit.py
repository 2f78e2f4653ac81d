"""The ``scan``, ``explain`` and ``report`` commands (registered on the app in ``cli``).

``scan`` audits traces (``api.audit`` reads them and stores the verdicts,
violations and contracts) and renders a report; ``report`` re-renders a
stored audit from its tables without reading traces again; ``explain``
shows one trace as a timeline with the reasons of its violations.

Exit codes (``scan``; ``report`` with ``--fail-on``):

- 0: no violation at or above ``--fail-on`` (default ``high``);
- 1: violations at or above ``--fail-on`` (after ``--baseline``);
- 2: usage or configuration error (each config problem printed on stderr
  as ``FILE: yaml.path: message``);
- 3: with ``--strict``, input errors (skipped files or records); this wins
  over 1, because the audit did not see every input.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from sponsio_audit.report import baseline as baselines
from sponsio_audit.report import explain as explain_view
from sponsio_audit.report import render, terminal
from sponsio_audit.report.data import SEVERITY_RANK, ReportData, load

EXIT_OK, EXIT_VIOLATIONS, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3
PROGRESS_DELAY = 0.5  # seconds before the spinner shows


class Format(str, Enum):
    """Report formats."""

    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"
    junit = "junit"
    sarif = "sarif"


class FailOn(str, Enum):
    """Lowest severity that fails the run (``none``: never)."""

    none = "none"
    low = "low"
    medium = "medium"
    high = "high"


class GroupBy(str, Enum):
    """What makes one trace: the OTLP trace id or the conversation id."""

    trace = "trace"
    conversation = "conversation"


class Engine(str, Enum):
    """Where ``scan`` ingests and evaluates: this process (DuckDB) or Spark."""

    default = "default"
    spark = "spark"


class UsageProblem(Exception):
    """A problem to print on stderr and exit 2 with (lines already formatted)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _err() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(lines: list[str]) -> typer.Exit:
    err = _err()
    for line in lines:
        err.print(Text(line))
    return typer.Exit(EXIT_USAGE)


class _Spinner:
    """A stderr status line that appears only after ``PROGRESS_DELAY`` (short scans show none)."""

    def __init__(self) -> None:
        self.status = _err().status("starting…")
        self.msg = "starting…"
        self.state = "waiting"  # waiting → shown → done (or waiting → done)
        self.lock = threading.Lock()
        self.timer = threading.Timer(PROGRESS_DELAY, self._show)
        self.timer.daemon = True

    def _show(self) -> None:
        with self.lock:
            if self.state == "waiting":
                self.status.update(self.msg)
                self.status.start()
                self.state = "shown"

    def say(self, msg: str) -> None:
        """Set the stage shown."""
        with self.lock:
            self.msg = msg
            if self.state == "shown":
                self.status.update(msg)

    def close(self) -> None:
        """Stop (and erase) the status line."""
        self.timer.cancel()
        with self.lock:
            if self.state == "shown":
                self.status.stop()
            self.state = "done"


@contextmanager
def _progress(quiet: bool) -> Iterator[Callable[[str], None]]:
    """A stage reporter: a delayed spinner on a terminal's stderr, else nothing."""
    if quiet or not sys.stderr.isatty():
        yield lambda _msg: None
        return
    spinner = _Spinner()
    spinner.timer.start()
    try:
        yield spinner.say
    finally:
        spinner.close()


def load_contracts(contracts: list[Path], packs: list[str]) -> Any:
    """The configuration of ``--contracts`` files and ``--pack`` names (``default`` if none)."""
    from sponsio_audit.config import Config, ConfigError, load_config, load_pack

    problems: list[str] = []
    merged = Config()
    sources: list[Any] = [("files", [str(p) for p in contracts])] if contracts else []
    sources += [("pack", name) for name in packs or ([] if contracts else ["default"])]
    for kind, what in sources:  # every source is loaded, so every problem is listed
        try:
            cfg = load_config(what) if kind == "files" else load_pack(what)
        except ConfigError as e:
            problems += [str(issue) for issue in e.errors]
            continue
        merged.contracts += cfg.contracts
        for aid, agent in cfg.agents.items():
            merged.agents.setdefault(aid, agent)
    seen: set[str] = set()
    for c in merged.contracts:
        if c.id in seen:
            problems.append(f"<config>: {c.id}: contract id given twice")
        seen.add(c.id)
    if problems:
        raise UsageProblem(problems)
    return merged


def _check_paths(paths: list[Path]) -> None:
    missing = [str(p) for p in paths if str(p) != "-" and not p.exists()]
    if missing:
        raise UsageProblem([f"{p}: no such file or directory" for p in missing])


def failing(data: ReportData, fail_on: str) -> int:
    """Number of violations at or above ``fail_on`` (0 for ``none``)."""
    if fail_on == "none":
        return 0
    limit = SEVERITY_RANK[fail_on]
    return sum(1 for v in data.blamed if SEVERITY_RANK.get(v["severity"], 0) <= limit)


def emit(data: ReportData, fmt: str, output: Path | None, quiet: bool) -> None:
    """Write the report to ``output`` or stdout (nothing on stdout with ``quiet``)."""
    if output is not None:
        if fmt == "table":
            with output.open("w", encoding="utf-8") as f:
                terminal.render(data, Console(file=f, width=140, no_color=True, highlight=False))
        else:
            output.write_text(render(data, fmt), encoding="utf-8")
        return
    if quiet:
        return
    if fmt == "table":
        terminal.render(data, Console(highlight=False))
    else:
        sys.stdout.write(render(data, fmt))
        sys.stdout.flush()


ContractsOpt = Annotated[
    list[Path] | None, typer.Option("--contracts", "-c", help="sponsio.yaml file(s).")
]
PackOpt = Annotated[
    list[str] | None, typer.Option("--pack", help="Shipped pack(s); 'default' if none.")
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Report format.")]
OutputOpt = Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here.")]
GroupByOpt = Annotated[GroupBy, typer.Option("--group-by", help="What one trace is.")]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="Only this agent's contracts.")]
JobsOpt = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        min=0,
        help="Processes reading traces; 0 (default): one per CPU for inputs of 64 MB or more. "
        "The result is the same.",
    ),
]


def scan(
    paths: Annotated[
        list[Path], typer.Argument(help="Trace files or directories ('-' for stdin).")
    ],
    contracts: ContractsOpt = None,
    pack: PackOpt = None,
    db: Annotated[
        Path | None, typer.Option("--db", help="Persist the store in this DuckDB file.")
    ] = None,
    fmt: FormatOpt = Format.table,
    output: OutputOpt = None,
    parquet: Annotated[
        Path | None, typer.Option("--parquet", help="Write Parquet tables into this directory.")
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Lowest severity that makes the exit code 1.")
    ] = FailOn.high,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Report and fail only on new violations.")
    ] = None,
    write_baseline: Annotated[
        Path | None, typer.Option("--write-baseline", help="Record the current violations.")
    ] = None,
    group_by: GroupByOpt = GroupBy.trace,
    agent: AgentOpt = None,
    jobs: JobsOpt = 0,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 3 when inputs were skipped.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No report on stdout, no progress.")
    ] = False,
    engine: Annotated[
        Engine,
        typer.Option(
            "--engine", help="default: this machine; spark: Apache Spark ([spark] extra)."
        ),
    ] = Engine.default,
    spark_master: Annotated[
        str, typer.Option("--spark-master", help="Spark master URL (with --engine spark).")
    ] = "local[*]",
) -> None:
    """Audit traces against contracts and report which trace broke which rule.

    Exit codes: 0 no violation at or above --fail-on; 1 violations at or
    above it; 2 usage or configuration error; 3 input errors (skipped
    files or records) with --strict.
    """
    from sponsio_audit.api import audit
    from sponsio_audit.ingest import Store

    try:
        _check_paths(paths)
        cfg = load_contracts(contracts or [], pack or [])
        known = baselines.read(baseline) if baseline is not None else None
    except UsageProblem as e:
        raise _fail(e.lines) from None
    except baselines.BaselineError as e:
        raise _fail([str(e)]) from None
    store = None
    try:
        with _progress(quiet) as say:
            if engine == Engine.spark:
                say("ingesting and evaluating on Spark…")
                store = Store.open(db)
                _spark_scan(paths, cfg, store, parquet, spark_master, group_by.value, agent)
            else:
                result = audit(
                    [str(p) for p in paths],
                    cfg,
                    db=db,
                    group_by=group_by.value,
                    agent=agent,
                    jobs=jobs,
                    progress=say,
                )
                store = result.store
            say("rendering…")
            data = load(store, timelines=fmt == Format.html, verdict_rows=fmt == Format.junit)
            if write_baseline is not None:
                baselines.write(write_baseline, data)
            if known is not None:
                data = baselines.apply(data, known)
            if parquet is not None and engine != Engine.spark:
                from sponsio_audit.report import parquet as parquet_out

                parquet_out.write(store, data, parquet)
        emit(data, fmt.value, output, quiet)
    finally:
        if store is not None:
            store.close()
    _exit(data, fail_on.value, strict)


def _spark_scan(
    paths: list[Path],
    cfg: Any,
    store: Any,
    parquet: Path | None,
    master: str,
    group_by: str,
    agent: str | None,
) -> None:
    """``scan --engine spark``: Spark writes every table as Parquet (into ``parquet``, else
    a temporary directory), read back into ``store`` for the report."""
    import tempfile

    from sponsio_audit.api import read_parquet

    try:
        from sponsio_audit.cli_spark import scan as spark_scan
    except ImportError as e:
        raise _fail([f"--engine spark needs the [spark] extra ({e})"]) from None
    with tempfile.TemporaryDirectory(prefix="sponsio-spark-") as tmp:
        out = parquet if parquet is not None else Path(tmp)
        try:
            spark_scan(
                [str(p) for p in paths], cfg, out, master=master, group_by=group_by, agent=agent
            )
        except Exception as e:  # Spark's errors carry JVM stack traces: one line of it
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise _fail([f"spark: {type(e).__name__}: {first}"[:500]]) from None
        read_parquet(out, store)


def _exit(data: ReportData, fail_on: str, strict: bool) -> None:
    if strict and data.totals["skipped"]:
        raise typer.Exit(EXIT_INPUT)
    if failing(data, fail_on):
        raise typer.Exit(EXIT_VIOLATIONS)


def report(
    db: Annotated[
        Path | None, typer.Option("--db", help="DuckDB file written by `scan --db`.")
    ] = None,
    fmt: FormatOpt = Format.table,
    output: OutputOpt = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Hide known violations.")
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Exit 1 on violations at or above this.")
    ] = FailOn.none,
    parquet: Annotated[
        Path | None,
        typer.Option("--parquet", help="Directory written by `scan --parquet` (instead of --db)."),
    ] = None,
) -> None:
    """Re-render a stored audit (`scan --db` or `--parquet`) without reading the traces again.

    Exit codes: 0, or 1 with violations at or above --fail-on (default none);
    2 when the file holds no audit.
    """
    from sponsio_audit.ingest import Store

    if (db is None) == (parquet is None):
        raise _fail(["give --db FILE or --parquet DIR (one of them)"])
    source = db if db is not None else parquet
    assert source is not None
    if not source.exists():
        raise _fail([f"{source}: no such file or directory"])
    if parquet is not None:
        from sponsio_audit.api import read_parquet

        try:
            store = read_parquet(parquet)
        except LookupError as e:
            raise _fail([str(e)]) from None
    else:
        store = Store.open(db)
    try:
        data = load(store, timelines=fmt == Format.html, verdict_rows=fmt == Format.junit)
        if baseline is not None:
            data = baselines.apply(data, baselines.read(baseline))
    except (LookupError, baselines.BaselineError) as e:
        raise _fail([f"{source}: {e}"]) from None
    finally:
        store.close()
    emit(data, fmt.value, output, quiet=False)
    _exit(data, fail_on.value, strict=False)


def _find_trace(store: Any, wanted: str) -> str:
    rows = (
        store.con.cursor()
        .execute(
            "SELECT DISTINCT trace_id FROM events WHERE starts_with(trace_id, ?) "
            "ORDER BY 1 LIMIT 3",
            [wanted],
        )
        .fetchall()
    )
    exact = [r[0] for r in rows if r[0] == wanted]
    if exact:
        return str(exact[0])
    if len(rows) == 1:
        return str(rows[0][0])
    if not rows:
        raise UsageProblem([f"no trace {wanted!r} in the input"])
    raise UsageProblem([f"trace prefix {wanted!r} is ambiguous: {', '.join(r[0] for r in rows)}…"])


def explain(
    trace: Annotated[str, typer.Option("--trace", "-t", help="Trace id (or a unique prefix).")],
    paths: Annotated[list[Path] | None, typer.Argument(help="Trace files or directories.")] = None,
    contract: Annotated[str | None, typer.Option("--contract", help="Only this contract.")] = None,
    contracts: ContractsOpt = None,
    pack: PackOpt = None,
    db: Annotated[
        Path | None, typer.Option("--db", help="Read a stored audit instead of PATHs.")
    ] = None,
    group_by: GroupByOpt = GroupBy.trace,
    agent: AgentOpt = None,
    jobs: JobsOpt = 0,
) -> None:
    """Show one trace as a timeline, with the blamed events and why each contract failed."""
    from sponsio_audit.api import audit
    from sponsio_audit.ingest import Store
    from sponsio_audit.report.data import trace_events

    try:
        if not paths and db is None:
            raise UsageProblem(["give trace PATHs, or --db FILE of a stored audit"])
        if paths:
            _check_paths(paths)
            cfg = load_contracts(contracts or [], pack or [])
        store = None
        try:
            if paths:
                sources = [str(p) for p in paths]
                store = audit(
                    sources, cfg, db=db, group_by=group_by.value, agent=agent, jobs=jobs
                ).store
            else:
                store = Store.open(db)
            tid = _find_trace(store, trace)
            data = load(store, timelines=False)
            events = trace_events(store, tid)
        except LookupError as e:
            raise UsageProblem([str(e)]) from None
        finally:
            if store is not None:
                store.close()
    except UsageProblem as e:
        raise _fail(e.lines) from None
    explain_view.render(data, tid, events, Console(highlight=False), contract)
