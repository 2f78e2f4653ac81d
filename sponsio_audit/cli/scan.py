"""``sponsio-audit scan``: ingest traces, audit them, report, and exit with a code a CI job trusts.

Nothing audited is not a pass: no input file (4), no trace in the inputs
(5) and no contract to check (6) have their own exit codes unless
``--allow-empty``. Contracts whose agent has no event in any trace are a
warning on stderr, an error (exit 3) with ``--strict``. See
``common.EXIT_CODES_HELP``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from sponsio_audit.cli import contracts as contract_sources
from sponsio_audit.cli import outputs, progress, stores, summary
from sponsio_audit.cli.common import (
    EXIT_CODES_HELP,
    EXIT_INCOMPLETE,
    EXIT_NO_INPUT,
    EXIT_NO_TRACE,
    EXIT_OK,
    EXIT_VIOLATIONS,
    AgentOpt,
    ContractsOpt,
    Engine,
    FailOn,
    Format,
    GroupBy,
    GroupByOpt,
    IngestLimitOpt,
    JobsOpt,
    PackOpt,
    UsageProblem,
    check_inputs,
    fail,
    guarded,
    limits_in_force,
    own_pyarrow,
    prepare_folder,
    prepare_output,
    say_error,
    say_warning,
    started,
    writing,
)

ENV_FAIL_ON = "SPONSIO_AUDIT_FAIL_ON"
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}

FormatOpt = Annotated[
    Format | None,
    typer.Option(
        "--format",
        "-f",
        help="Report format; default: from each -o extension, else $SPONSIO_AUDIT_FORMAT, "
        "else table.",
        show_default=False,
    ),
]
OutputOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the report here (repeat for several; .sarif .json .html .md .xml .txt).",
    ),
]
FailOnOpt = Annotated[
    FailOn,
    typer.Option(
        "--fail-on",
        help="Lowest severity that makes the exit code 1.",
        envvar=ENV_FAIL_ON,
        show_envvar=True,
    ),
]
LimitOpt = Annotated[
    int, typer.Option("--limit", min=0, help="Violations listed by the table format (0: all).")
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="Findings only: no summary line, no progress.")
]
SilentOpt = Annotated[
    bool, typer.Option("--silent", help="Print nothing (errors excepted); files are still written.")
]


def failing(data: Any, fail_on: str) -> int:
    """Number of violations at or above ``fail_on`` (0 for ``none``)."""
    if fail_on == "none":
        return 0
    limit = SEVERITY_RANK[fail_on]
    counts = data.blamed_counts("severity")
    return sum(n for s, n in counts.items() if SEVERITY_RANK.get(s, 0) <= limit)


def incomplete_inputs(data: Any) -> int:
    """Skipped records and files, duplicates of an already read file excepted."""
    dup = {f["file_id"] for f in data.files if f["format"] == "duplicate"}
    return sum(1 for s in data.skipped if s["file_id"] not in dup)


def _check_paths(paths: list[Path]) -> list[tuple[str, int]]:
    check_inputs(paths)
    return progress.inputs(paths)


def scan(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Trace files or directories ('-' for stdin).", show_default=False),
    ] = None,
    contracts: ContractsOpt = None,
    pack: PackOpt = None,
    db: Annotated[
        Path | None,
        typer.Option("--db", help="Keep the store in this DuckDB file (replaces its audit)."),
    ] = None,
    append: Annotated[
        bool, typer.Option("--append", help="With --db: add to the stored audit, do not replace.")
    ] = False,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    parquet: Annotated[
        Path | None, typer.Option("--parquet", help="Write Parquet tables into this directory.")
    ] = None,
    fail_on: FailOnOpt = FailOn.high,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Report and fail only on new violations.")
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option("--write-baseline", help="Record the current violations; exit 0."),
    ] = None,
    group_by: GroupByOpt = GroupBy.trace,
    agent: AgentOpt = None,
    jobs: JobsOpt = 0,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Exit 3 on skipped inputs or contracts for no trace."),
    ] = False,
    allow_empty: Annotated[
        bool,
        typer.Option("--allow-empty", help="No input file, trace or contract is not an error."),
    ] = False,
    limit: LimitOpt = 20,
    ingest_limit: IngestLimitOpt = None,
    quiet: QuietOpt = False,
    silent: SilentOpt = False,
    show_config: Annotated[
        bool,
        typer.Option("--show-config", help="Print the contract files and packs in force; exit."),
    ] = False,
    regex_timeout_ms: Annotated[
        float | None,
        typer.Option(
            "--regex-timeout-ms",
            min=0.001,
            help="Time limit of one lookaround-regex search (unknown when it runs out).",
        ),
    ] = None,
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

    Example: sponsio-audit scan traces/ -c sponsio.yaml -o audit.sarif -o audit.html
    """
    if show_config:
        with guarded():
            cfg, src = contract_sources.load(contracts or [], pack or [])
            sys.stdout.write("\n".join(contract_sources.show(cfg, src)) + "\n")
        raise typer.Exit(EXIT_OK)
    if not paths:
        fail(["give trace PATHs to scan (or --show-config)"])
    opts = ScanRun(
        paths=paths, contract_files=contracts or [], packs=pack or [], db=db, append=append,
        fmt=fmt.value if fmt else None, output=output or [], parquet=parquet,
        fail_on=fail_on.value, baseline=baseline, write_baseline=write_baseline,
        group_by=group_by.value, agent=agent, jobs=jobs, strict=strict, allow_empty=allow_empty,
        limit=limit, quiet=quiet, silent=silent, regex_timeout_ms=regex_timeout_ms,
        engine=engine.value, spark_master=spark_master, ingest_limits=tuple(ingest_limit or ()),
    )  # fmt: skip
    with guarded(db):
        code = _scan(opts)
    raise typer.Exit(code)


@dataclass(frozen=True)
class ScanRun:
    """The options of one ``scan``, as parsed."""

    paths: list[Path]
    contract_files: list[Path]
    packs: list[str]
    db: Path | None
    append: bool
    fmt: str | None
    output: list[Path]
    parquet: Path | None
    fail_on: str
    baseline: Path | None
    write_baseline: Path | None
    group_by: str
    agent: str | None
    jobs: int
    strict: bool
    allow_empty: bool
    limit: int
    quiet: bool
    silent: bool
    regex_timeout_ms: float | None = None
    engine: str = "default"
    spark_master: str = "local[*]"
    ingest_limits: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What a scan produced: the report data and what to say about it."""

    data: Any
    idle: str | None  # contracts whose agent has no event in any trace
    baseline: summary.BaselineUse | None
    written: tuple[int, int]  # violations and fingerprints written to --write-baseline
    notes: tuple[str, ...] = ()  # warnings of the audit itself (a worker that died)


def _scan(o: ScanRun) -> int:
    own_pyarrow(spark=o.engine == Engine.spark.value)
    from sponsio_audit.recursion import shielded

    with shielded():  # DuckDB's import runs Python from C++, which a Ctrl-C must not break
        import duckdb  # noqa: F401
    ts = outputs.targets(o.output, o.fmt)
    outputs.check(ts)
    if o.parquet is not None:
        prepare_folder(o.parquet)
    if o.write_baseline is not None:
        prepare_output(o.write_baseline)
    files = _check_paths(o.paths)
    if not files and not o.allow_empty:
        where = ", ".join(str(p) for p in o.paths)
        raise UsageProblem([f"no input file in {where} (--allow-empty accepts it)"], EXIT_NO_INPUT)
    if o.engine != Engine.spark.value:
        jobs, told = _prestart_workers(o.jobs, files)
        o = replace(o, jobs=jobs)
        for note in told if not o.silent else ():
            say_warning(note)
    else:
        told = ()
    from sponsio_audit.report import baseline as baselines

    cfg, src = contract_sources.load(o.contract_files, o.packs)
    contract_sources.require(cfg, src, o.agent, o.allow_empty)
    limits = limits_in_force(getattr(cfg, "limits", []), list(o.ingest_limits))
    if o.engine == Engine.spark.value and limits.describe() != type(limits)().describe():
        raise UsageProblem(["ingest limits are not applied by --engine spark yet; drop them"])
    known = None
    if o.baseline is not None:
        try:
            known = baselines.read(o.baseline)
        except baselines.BaselineError as e:
            raise UsageProblem([str(e)]) from None
    out = _run(o, files, cfg, src, ts, known, limits, told)
    for note in out.notes if not o.silent else ():
        say_warning(note)
    if not (o.quiet or o.silent):
        sys.stderr.write(summary.line(out.data, out.baseline) + "\n")
    if o.write_baseline is not None and not o.silent:
        n, fps = out.written
        sys.stderr.write(
            f"wrote a baseline of {summary.plural(n, 'violation')} "
            f"({summary.plural(fps, 'fingerprint')}) to {o.write_baseline}\n"
        )
    return _exit_code(o, out)


def _prestart_workers(jobs: int, files: list[tuple[str, int]]) -> tuple[int, tuple[str, ...]]:
    """``--jobs`` resolved for these inputs (0: auto, ``workers.resolve_jobs``); with more
    than one, the workers' forkserver starts now, so that its start overlaps this
    command's imports and configuration instead of delaying the first chunk (0.3 s).
    Where no worker can run (``workers.cannot_start``), 1, with a warning to print and
    record when more were asked for explicitly."""
    from sponsio_audit.ingest.workers import cannot_start, prestart, resolve_jobs

    stdin = any(p == "-" for p, _ in files)
    resolved = resolve_jobs(jobs, None if stdin else sum(n for _, n in files))
    if resolved > 1 and (why := cannot_start()) is not None:
        if jobs > 1:
            return 1, (
                f"--jobs {jobs}: worker processes cannot run here: {why}; reading in this process",
            )
        return 1, ()
    prestart(resolved)
    return resolved, ()


def _run(
    o: ScanRun,
    files: list[tuple[str, int]],
    cfg: Any,
    src: contract_sources.Sources,
    ts: list[outputs.Target],
    known: Any,
    limits: Any,
    told: Sequence[str] = (),
) -> Outcome:
    """Audit (``api.audit``), and write every output (the store is closed after)."""
    from sponsio_audit.api import audit
    from sponsio_audit.report import baseline as baselines
    from sponsio_audit.report.data import load

    started()  # imported and configured: the collector is on from here
    where = stores.prepare_for_scan(o.db, o.append)
    store = None
    audited = None  # the audit's result (Spark's tables are read from the store)
    notes: list[str] = []
    try:
        with progress.bar(files, progress.wanted(o.quiet or o.silent)) as (tick, stage):
            if o.engine == Engine.spark.value:
                from datetime import datetime, timezone

                from sponsio_audit.api import save_provenance
                from sponsio_audit.ingest import Store

                stage("ingesting and evaluating on Spark")
                began = datetime.now(timezone.utc)
                store = Store.open(str(where.path) if where.path is not None else None)
                _spark_scan(o, cfg, store)
                audited_contracts = tuple(contract_sources.chosen(cfg, o.agent))
                save_provenance(store, audited_contracts, cfg.files, began, src.items)
            else:
                result = audit(
                    [str(p) for p in o.paths], cfg, db=where.path, group_by=o.group_by,
                    agent=o.agent, jobs=o.jobs, progress=stage, on_file=tick,
                    sources=src.items, regex_timeout_ms=o.regex_timeout_ms,
                    limits=limits, raw_json=True if o.parquet is not None else None,
                    lean=o.db is None and o.parquet is None,  # the store is read by nothing after
                    warn=notes.append, warnings=told, own_files=where.own_files(),
                )  # fmt: skip
                store = result.store
                audited_contracts = result.contracts
                audited = result
            if o.db is not None:
                store = stores.finished(store, where)
            stage("rendering")
            fmts = {t.fmt for t in ts}
            data = load(
                store,
                timelines="html" in fmts,
                verdict_rows="junit" in fmts,
                violations=None if audited is None else audited.violations,
                verdicts=None if audited is None else audited.verdicts,
                totals=None if audited is None else audited.summary,
            )
            data = baselines.with_matches(store, data)
            ids, present, agents = summary.idle_contracts(store, audited_contracts)
            idle = summary.idle_message(ids, present, agents) if ids else None
            written = (0, 0)
            if o.write_baseline is not None:
                with writing(o.write_baseline):
                    written = (len(data.blamed), baselines.write(o.write_baseline, data))
            use = None
            if known is not None and o.baseline is not None:
                data, stale = baselines.apply_counted(data, known)
                use = summary.BaselineUse(str(o.baseline), data.suppressed, stale)
            if o.parquet is not None and o.engine != Engine.spark.value:  # Spark wrote it
                from sponsio_audit.report import parquet as parquet_out

                with writing(o.parquet):
                    parquet_out.write(store, data, o.parquet)
        for t in ts:
            if t.path is None and o.silent:
                continue
            outputs.write(
                data, t, quiet=o.quiet, limit=o.limit, fail_on=o.fail_on, header=src.header()
            )
    finally:
        if store is not None:
            store.close()
        where.discard()  # a replacing scan that stopped before its store was whole
    return Outcome(data, idle, use, written, tuple(notes))


def _spark_scan(o: ScanRun, cfg: Any, store: Any) -> None:
    """``scan --engine spark``: Spark writes every table as Parquet (into ``--parquet``, else
    a temporary directory), read back into ``store`` for the report."""
    import dataclasses
    import tempfile

    from sponsio_audit.api import read_parquet

    try:
        from sponsio_audit.cli_spark import scan as spark_scan
    except ImportError as e:
        raise UsageProblem([f"--engine spark needs the [spark] extra ({e})"]) from None
    if o.regex_timeout_ms is not None:  # the flag wins over the files, as in api.audit
        cfg = dataclasses.replace(cfg, regex_timeout_ms=o.regex_timeout_ms)
    with tempfile.TemporaryDirectory(prefix="sponsio-spark-") as tmp:
        out = o.parquet if o.parquet is not None else Path(tmp)
        try:
            spark_scan(
                [str(p) for p in o.paths], cfg, out, master=o.spark_master,
                group_by=o.group_by, agent=o.agent,
            )  # fmt: skip
        except Exception as e:  # Spark's errors carry JVM stack traces: one line of it
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise UsageProblem([f"spark: {type(e).__name__}: {first}"[:500]]) from None
        read_parquet(out, store)


def _exit_code(o: ScanRun, out: Outcome) -> int:
    data = out.data
    if data.totals["traces"] == 0 and not o.allow_empty:
        say_error(
            f"no trace in {summary.plural(data.totals['files'], 'input file')} "
            f"({data.totals['skipped']} skipped; see the report's skipped inputs); "
            "--allow-empty accepts it"
        )
        return EXIT_NO_TRACE
    if out.idle is not None:
        if o.strict:
            say_error(out.idle)
        elif not o.silent:
            say_warning(out.idle)
    if o.strict and (incomplete_inputs(data) or out.idle is not None):
        return EXIT_INCOMPLETE
    if o.write_baseline is not None:
        return EXIT_OK
    return EXIT_VIOLATIONS if failing(data, o.fail_on) else EXIT_OK


scan.__doc__ = f"{scan.__doc__}\n\n    {EXIT_CODES_HELP}\n"
