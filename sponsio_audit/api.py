"""``audit(paths, contracts) -> AuditResult``: the one entry point of the batch path.

Ingest (when given paths), ground, evaluate, and fill the ``verdicts`` and
``violations`` tables of the store. Two engines compute the same verdicts:
``columnar`` (the fast path, vectorised over every trace at once) and
``reference`` (per trace, online grounding + the reference evaluator);
tests hold them against each other.

How views are formed (SEMANTICS.md §1) is documented in ``engine``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.engine import columnar_raw, reference_raw
from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.verdicts import build_tables, count_by

Permissions = Mapping[str, frozenset[str]]
STORE_TABLES = ("files", "skipped", "spans", "events", "decisions", "verdicts", "violations")


@dataclass(frozen=True)
class Summary:
    """Totals of one audit; ``records == events + skipped`` for the inputs' records."""

    files: int
    records: int
    spans: int
    events: int
    skipped: int
    traces: int
    contracts: int
    verdicts: dict[str, int]
    violations_by_kind: dict[str, int]
    violations_by_severity: dict[str, int]
    skipped_clauses: int


@dataclass(frozen=True)
class AuditResult:
    """Verdicts and violations (Arrow tables) plus the store they were written to."""

    store: Store
    contracts: tuple[Contract, ...]
    verdicts: pa.Table
    violations: pa.Table
    summary: Summary

    def table(self, name: str) -> pa.Table:
        """A table of the store (files, skipped, spans, events, decisions, …) as Arrow."""
        if name not in STORE_TABLES:
            raise ValueError(f"no table {name!r}; one of {', '.join(STORE_TABLES)}")
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
) -> AuditResult:
    """Audit traces against contracts (a list of ``Contract`` or a loaded ``Config``).

    ``source`` is a store that already holds events, or paths to ingest
    (``db`` persists the store). ``agent`` keeps only that agent's
    contracts. ``jobs`` processes read the traces (0: auto, one per CPU for
    inputs of 64 MB or more; the result does not depend on it; a script using it needs the usual
    ``if __name__ == "__main__":`` guard, as workers import ``__main__``).
    The verdicts and violations replace any earlier ones in the store.
    """
    cs, perms = _contracts_and_permissions(contracts, permissions)
    if agent is not None:
        cs = tuple(c for c in cs if c.agent in (agent, "*"))
    if isinstance(source, Store):
        store = source
    else:
        store = Store.open(str(db) if db is not None else None)
        paths = [source] if isinstance(source, (str, Path)) else list(source)
        ingest(list(paths), store, group_by=group_by, jobs=jobs)
    events = store.con.sql("SELECT * FROM events ORDER BY trace_id, seq").to_arrow_table()
    if engine == "reference":
        raw = reference_raw(events, cs, perms)
    elif engine == "columnar":
        raw = columnar_raw(events, cs, perms)
    else:
        raise ValueError(f"unknown engine {engine!r} (columnar or reference)")
    verdicts, violations = build_tables(raw, events, cs)
    _save(store, verdicts, violations)
    return AuditResult(store, cs, verdicts, violations, _summary(store, cs, verdicts, violations))


def _save(store: Store, verdicts: pa.Table, violations: pa.Table) -> None:
    con = store.con
    for name, table in (("verdicts", verdicts), ("violations", violations)):
        con.register("_incoming", table)
        con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM _incoming')
        con.unregister("_incoming")


def _summary(
    store: Store, cs: Sequence[Contract], verdicts: pa.Table, violations: pa.Table
) -> Summary:
    con = store.con

    def scalar(sql: str) -> int:
        rows = con.sql(sql).fetchall()  # not execute().fetchone(): it leaves a pending result
        return int(rows[0][0] or 0) if rows else 0

    return Summary(
        files=scalar("SELECT count(*) FROM files"),
        records=scalar("SELECT coalesce(sum(records), 0) FROM files"),
        spans=scalar("SELECT count(*) FROM spans"),
        events=scalar("SELECT count(*) FROM events"),
        skipped=scalar("SELECT count(*) FROM skipped"),
        traces=scalar("SELECT count(DISTINCT trace_id) FROM events"),
        contracts=len(cs),
        verdicts=count_by(
            verdicts, "verdict", ("pass", "violated", "unverifiable", "not_applicable", "skipped")
        ),
        violations_by_kind=count_by(
            verdicts.filter(pc.equal(verdicts["verdict"], "violated")),
            "kind",
            ("guarantee", "liveness", "assumption"),
        ),
        violations_by_severity=count_by(
            violations.filter(violations["blamed"]), "severity", ("high", "medium", "low")
        ),
        skipped_clauses=sum(1 for c in cs for g in c.guarantees if g.skipped is not None),
    )
