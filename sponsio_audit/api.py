"""``audit(paths, contracts) -> AuditResult``: the one entry point of the batch path.

Ingest (when given paths), ground, evaluate, and fill the ``verdicts``,
``violations`` and ``contracts`` tables of the store: this is the one
path that writes them (reports only read). ``summary(store)`` gives the
totals of a stored audit, once, for the result and for every report.
Two engines compute the same verdicts:
``columnar`` (the fast path, vectorised over every trace at once) and
``reference`` (per trace, online grounding + the reference evaluator);
tests hold them against each other.

How views are formed (SEMANTICS.md §1) is documented in ``engine``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit import regexes
from sponsio_audit.config.discovery import ConfigSource
from sponsio_audit.engine import empty_raw
from sponsio_audit.evaluation import ENGINES, AuditTables, ContractSet, evaluate
from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ingest.limits import DEFAULT as DEFAULT_LIMITS
from sponsio_audit.ingest.limits import Limits
from sponsio_audit.ingest.tables import TABLES
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.provenance import (
    SEMANTICS_VERSION,
    SOURCES_SCHEMA,
    provenance,
    replace_tables,
    save_provenance,
    sources_table,
)
from sponsio_audit.row_order import in_order, report_order
from sponsio_audit.totals import Summary, summary
from sponsio_audit.verdicts import as_stored, build_tables

__all__ = [
    "SEMANTICS_VERSION",
    "SOURCES_SCHEMA",
    "AuditResult",
    "Summary",
    "audit",
    "contracts_table",
    "provenance",
    "read_parquet",
    "save_provenance",
    "sources_table",
    "summary",
]

Permissions = Mapping[str, frozenset[str]]
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""A table name ``read_parquet`` takes from a file name (others are not ours)."""
EVALUATE_ROWS = 50_000
"""Events read from the store per batch; ``evaluate`` takes them in whole traces."""
AUDIT_TABLES = ("verdicts", "violations", "contracts", "audit_stats", "provenance", "sources")
"""The tables ``audit`` writes beside ingest's."""
STORE_TABLES = (*TABLES, *AUDIT_TABLES)
"""Every table of a stored audit: what ``scan --db`` replaces and ``AuditResult.table`` reads."""
CONTRACTS_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("agent", pa.string(), nullable=False),
        pa.field("description", pa.string()),
        pa.field("severity", pa.string(), nullable=False),
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("safe_tool", pa.string()),
        pa.field("source", pa.string()),
        pa.field("guarantees", pa.list_(pa.string())),
        pa.field("patterns", pa.list_(pa.string())),
        pa.field("skipped", pa.list_(pa.string())),
        pa.field("file", pa.string()),
        pa.field("line", pa.int64()),
    ]
)
"""The ``contracts`` table: one row per contract audited, lists per guarantee; ``file`` and
``line`` locate it in its sponsio.yaml (null when given from Python)."""


@dataclass(frozen=True)
class AuditResult:
    """Verdicts and violations (Arrow tables) plus the store they were written to."""

    store: Store
    contracts: tuple[Contract, ...]
    verdicts: pa.Table
    violations: pa.Table
    summary: Summary
    provenance: dict[str, Any] = field(default_factory=dict)
    """What ran, when, on what (``provenance``); stored as the ``provenance`` table."""
    sources: tuple[ConfigSource, ...] = ()
    """The contract files and packs in force and how each was chosen (for provenance)."""
    lean: bool = False
    """Run with ``audit(lean=True)``: the store holds no spans rows, verdicts or violations."""

    def table(self, name: str) -> pa.Table:
        """A table of the store (files, skipped, spans, events, contracts, …) as Arrow;
        of a lean audit, the verdicts and violations as they would be stored, and no
        ``spans`` (never an empty table that stands for rows not written)."""
        if name not in STORE_TABLES:
            raise ValueError(f"no table {name!r}; one of {', '.join(STORE_TABLES)}")
        if self.lean and name in ("verdicts", "violations"):
            return as_stored(self.verdicts if name == "verdicts" else self.violations)
        if name == "spans" and not self.store.spans:
            raise ValueError("no spans rows: this audit was run with lean=True")
        return self.store.con.sql(f'SELECT * FROM "{name}"').to_arrow_table()


def _contracts_and_permissions(
    contracts: Any, permissions: Permissions | None
) -> tuple[tuple[Contract, ...], dict[str, frozenset[str]]]:
    perms: dict[str, frozenset[str]] = {}
    if hasattr(contracts, "contracts"):  # a loaded Config
        for agent_id, agent in getattr(contracts, "agents", {}).items():
            perms[agent_id] = frozenset(getattr(agent, "permissions", ()) or ())
        contracts = contracts.contracts
    if permissions:
        perms.update({k: frozenset(v) for k, v in permissions.items()})
    return tuple(contracts), perms


def audit(
    source: Store | Sequence[str | Path] | str | Path,
    contracts: Any,
    *,
    db: str | Path | None = None,
    group_by: str = "trace",
    permissions: Permissions | None = None,
    engine: str = "columnar",
    agent: str | None = None,
    jobs: int = 1,
    threads: int = 0,
    progress: Callable[[str], None] | None = None,
    command: Sequence[str] | None = None,
    on_file: Callable[[str, int], None] | None = None,
    sources: Sequence[ConfigSource] = (),
    regex_timeout_ms: float | None = None,
    limits: Limits = DEFAULT_LIMITS,
    raw_json: bool | None = None,
    lean: bool = False,
    warn: Callable[[str], None] | None = None,
    warnings: Sequence[str] = (),
    own_files: Sequence[str | Path] = (),
) -> AuditResult:
    """Audit traces against contracts (a list of ``Contract`` or a loaded ``Config``).

    ``source`` is a store that already holds events, or paths to ingest
    (``db`` persists the store). ``agent`` keeps only that agent's
    contracts. ``jobs`` processes read the traces (0: auto, one per CPU for
    inputs of 64 MB or more; the result does not depend on it; a script using it needs the usual
    ``if __name__ == "__main__":`` guard, as workers import ``__main__``).
    ``threads`` threads ground and judge the events (0: auto, ``evaluation.evaluate``;
    the result does not depend on it either).
    The verdicts, violations and contracts replace any earlier ones in the
    store. ``progress`` is told each stage as it starts ("reading traces…").
    ``command`` is the command line recorded in the provenance (``sys.argv`` when None).
    ``on_file(path, spans so far)`` is told each input file as it is read; ``sources``
    (the files and packs the contracts came from) are kept on the result and
    in the ``sources`` table.
    ``regex_timeout_ms`` is the time limit of one lookaround-regex search (else the
    configuration's ``regex_timeout_ms``, else ``regexes.DEFAULT_TIME_LIMIT``); the
    searches that ran out of time are counted in ``Summary.regex_timeouts``.
    ``limits`` bounds what one input file or record may cost (``ingest.limits``).
    ``raw_json``: write ``spans.attributes``/``resource`` (``Store.raw_json``; default:
    only into ``db``), which nothing reads but a user's SQL or Parquet.
    ``lean=True``: a store opened here that nothing reads after the audit and its report
    (``scan`` without ``--db`` or ``--parquet``): ingest writes no ``spans`` rows
    (``Store.spans``; the counts of spans come from ``span_facts``), and the verdicts and
    violations stay in the result only, never copied into the store (``report.data.load``
    takes them from the result); ``table`` gives them as stored and refuses ``spans``.
    ``warn(line)`` is told what the user should know that is no error (an ingest worker that
    died, its chunks read again); the same lines are kept in the provenance's ``warnings``,
    after ``warnings`` (the caller's own, given before the audit: ``scan``'s ``--jobs`` that
    cannot run). ``db``, and the databases ``own_files`` (with their logs and spill folders),
    are never read as traces when ``source`` holds them.
    """
    started = datetime.now(timezone.utc)
    say = progress or (lambda _stage: None)
    told = list(warnings)

    def warned(line: str) -> None:
        told.append(line)
        if warn is not None:
            warn(line)

    cs, perms = _contracts_and_permissions(contracts, permissions)
    if agent is not None:
        cs = tuple(c for c in cs if c.agent in (agent, "*"))
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (columnar or reference)")
    ms = (
        regex_timeout_ms
        if regex_timeout_ms is not None
        else getattr(contracts, "regex_timeout_ms", None)
    )
    limit = None if ms is None else ms / 1000.0
    held: list[pa.Table] = []  # the events as ingest wrote them, when it wrote them all
    if isinstance(source, Store):
        store = source
    else:
        store = Store.open(str(db) if db is not None else None, raw_json=raw_json, spans=not lean)
        paths = [source] if isinstance(source, (str, Path)) else list(source)
        say("reading traces…")
        try:
            ingest(
                list(paths),
                store,
                group_by=group_by,
                jobs=jobs,
                progress=on_file,
                limits=limits,
                warn=warned,
                on_events=held.append,
                own_files=own_files,
            )
        except BaseException:
            store.close()
            raise
    try:  # a store opened here is closed when the audit stops (an error, Ctrl-C)
        say("evaluating contracts…")
        judge = partial(_evaluated, cs=cs, perms=perms, engine=engine, threads=threads, limit=limit)
        if held:  # not read back: the rows ingest held in memory as it wrote them
            tables, timeouts = judge(held.pop().to_reader(max_chunksize=EVALUATE_ROWS))
        else:
            tables, timeouts = _stored(store, judge)
        stats = pa.table({"regex_timeouts": pa.array([timeouts], pa.int64())})
        verdicts, violations = tables.verdicts, tables.violations
        del tables
        empty = store.con.sql(EMPTY_TRACES).fetchall() if _has_empty(store) else []
        if empty:  # traces with no events: judged too (n = 0), in trace order with the others
            ev, vi = build_tables(
                empty_raw([t for (t,) in empty], cs, perms), EVENT_SCHEMA.empty_table(), cs
            )
            verdicts = in_order(pa.concat_tables([verdicts, ev]))
            violations = in_order(pa.concat_tables([violations, vi]))
        violations = report_order(violations)  # stored as reports list them: load copies none
        lean = lean and store is not source  # a store handed in may be read after
        kept = {} if lean else {"verdicts": verdicts, "violations": violations}
        replace_tables(store, **kept, contracts=contracts_table(cs), audit_stats=stats)
        files = getattr(contracts, "files", ())
        prov = save_provenance(store, cs, files, started, sources, command, told)
        totals = summary(store, (verdicts, violations))
        return AuditResult(store, cs, verdicts, violations, totals, prov, tuple(sources), lean)
    except BaseException:
        if store is not source:
            store.close()
        raise


def _evaluated(
    events: pa.RecordBatchReader,
    cs: tuple[Contract, ...],
    perms: Permissions,
    engine: str,
    threads: int,
    limit: float | None,
) -> tuple[AuditTables, int]:
    """``evaluate`` under the regex time ``limit``, and the searches that ran out of time."""
    with regexes.time_limit(limit) as searches:
        tables = evaluate(events, ContractSet(cs, perms), engine=engine, threads=threads)
    return tables, searches.timeouts


def _stored(
    store: Store, judge: Callable[[pa.RecordBatchReader], tuple[AuditTables, int]]
) -> tuple[AuditTables, int]:
    """``judge`` (``_evaluated``, its contracts bound) of the store's events: as stored, when
    that is (trace_id, seq) order (DuckDB need not sort them), else sorted by DuckDB and
    judged again from the start."""
    cur = store.con.cursor()  # own cursor: closed (the stream dropped) when out of order
    try:
        return judge(_in_order(cur))
    except _Unordered:
        cur.close()
        events = store.con.sql(f"SELECT * FROM events ORDER BY {EVENT_ORDER}")
        return judge(events.to_arrow_reader(EVALUATE_ROWS))
    finally:
        cur.close()


EVENT_ORDER = "trace_id, seq"
"""The order ``evaluate`` reads the events in."""


class _Unordered(Exception):
    """The stored events are not in ``EVENT_ORDER``: they are read again, sorted."""


def _in_order(con: duckdb.DuckDBPyConnection) -> pa.RecordBatchReader:
    """The events as stored, checked batch by batch to be in (trace_id, seq) order, strictly
    (``_Unordered`` is raised at the first row out of order, before it is evaluated)."""
    reader = con.sql("SELECT * FROM events").to_arrow_reader(EVALUATE_ROWS)
    return pa.RecordBatchReader.from_batches(reader.schema, _checked(reader))


def _checked(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    last: tuple[str, int] | None = None
    for b in batches:
        n = b.num_rows
        if n == 0:
            continue
        t, s = b.column("trace_id"), b.column("seq")
        first = (t[0].as_py(), s[0].as_py())
        if last is not None and not last < first:
            raise _Unordered
        if n > 1:
            t0, t1, s0, s1 = t.slice(0, n - 1), t.slice(1), s.slice(0, n - 1), s.slice(1)
            ahead = pc.or_(pc.less(t0, t1), pc.and_(pc.equal(t0, t1), pc.less(s0, s1)))
            if not pc.all(ahead).as_py():
                raise _Unordered
        last = (t[n - 1].as_py(), s[n - 1].as_py())
        yield b


EMPTY_TRACES = (
    "SELECT DISTINCT trace_id FROM traces WHERE events = 0 "
    "AND trace_id NOT IN (SELECT trace_id FROM events) ORDER BY trace_id"
)
"""Traces ingest read that have no events: audited too, as traces of length 0."""


def _has_empty(store: Store) -> bool:
    """Whether a trace ingest read may have no events (a ``traces`` row counting none):
    a scan of ``traces`` alone, which spares ``EMPTY_TRACES``' look-up of every event's
    trace (25 ms of 180k events) when every trace has events."""
    return bool(store.con.sql("SELECT 1 FROM traces WHERE events = 0 LIMIT 1").fetchall())


def contracts_table(contracts: Sequence[Contract]) -> pa.Table:
    """The ``contracts`` table of loaded contracts (sorted by id)."""
    rows = [
        {
            "id": c.id,
            "agent": c.agent,
            "description": c.description,
            "severity": c.severity,
            "strategy": c.strategy.kind,
            "safe_tool": c.strategy.safe_tool,
            "source": c.source,
            "guarantees": [g.text for g in c.guarantees],
            "patterns": [g.pattern for g in c.guarantees],
            "skipped": [g.skipped for g in c.guarantees],
            "file": c.origin[0] if c.origin else None,
            "line": c.origin[1] if c.origin else None,
        }
        for c in sorted(contracts, key=lambda c: c.id)
    ]
    return pa.Table.from_pylist(rows, schema=CONTRACTS_SCHEMA)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _parquet() -> Any:
    """``pyarrow.parquet``, imported when a Parquet audit is read (9 ms a command need not
    pay otherwise)."""
    import pyarrow.parquet as pq

    return pq


def read_parquet(directory: str | Path, store: Store | None = None) -> Store:
    """A store (in memory unless given) holding the tables of ``directory``'s Parquet files.

    Raises ``LookupError`` when the directory holds no audit (no verdicts,
    violations or contracts file), or one of its tables cannot be read as this tool
    wrote it (a corrupt or cut file, other columns).
    """
    src = Path(directory)
    found = {p.name[: -len(".parquet")]: p for p in sorted(src.glob("*.parquet"))}
    missing = [n for n in ("verdicts", "violations", "contracts") if n not in found]
    if not src.is_dir() or missing:
        raise LookupError(
            f"no audit in {src}: missing {', '.join(f'{n}.parquet' for n in missing)} "
            "(write one with `scan --parquet DIR`)"
        )
    given = store
    store = store if store is not None else Store.open()
    for name, path in found.items():
        if not _NAME.fullmatch(name):
            continue  # not a table this tool writes
        try:
            table = _parquet().read_table(path)
            if name == "violations":
                extra = ("path", "fingerprint")  # what report.parquet adds to violations
                table = table.drop_columns([c for c in extra if c in table.column_names])
            if name in TABLES:
                schema = TABLES[name]
                table = table.select(schema.names).cast(_plain(schema))
        except (OSError, ValueError, KeyError, TypeError) as e:  # pyarrow's: corrupt, cut, other
            if given is None:
                store.close()
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise LookupError(
                f"{path}: not a table of an audit (corrupt or other): {why}"
            ) from None
        if name in TABLES:
            store.con.execute(f"DELETE FROM {_quoted(name)}")
            store.insert(name, table)
        else:
            con = store.con
            con.register("_parquet_in", table)
            try:
                con.execute(f"CREATE OR REPLACE TABLE {_quoted(name)} AS SELECT * FROM _parquet_in")
            finally:
                con.unregister("_parquet_in")
    return store


def _plain(schema: pa.Schema) -> pa.Schema:
    """``schema`` with extension types (``arrow.json``) as their storage: how they come back."""
    return pa.schema(
        [
            pa.field(f.name, f.type.storage_type, f.nullable)
            if isinstance(f.type, pa.BaseExtensionType)
            else f
            for f in schema
        ]
    )
