"""``ReportData``: everything a renderer needs, read from the store's tables only.

Reports never re-evaluate and never write to the store (ARCHITECTURE.md):
``api.audit`` writes the ``verdicts``, ``violations`` and ``contracts``
tables, and ``load(store)`` reads ``files``, ``skipped``, ``contracts``,
``verdicts``, ``violations``, the guard's recorded ``decisions`` and the
events of violated traces back; the totals are ``totals.summary``'s. The same
``load`` is used right after a scan and by ``report --db`` on a stored
audit, so both render identical output (right after a scan, the ``violations``
rows are the audit's own table, the rows it stored, typed as the store gives them).

Ordering is deterministic: violations by (severity rank, contract, trace,
guarantee, step); contracts by id; files by file id; guard decisions by
contract id (decisions of no contract last).

A **violation** is one violated (trace, contract, guarantee): the row of
the ``violations`` table with ``blamed = true``. The other rows of the same
triple are its further offending events.
"""

from __future__ import annotations

import json
from concurrent.futures import wait
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.ingest import Store
from sponsio_audit.ingest.store import prompt_sql
from sponsio_audit.report import verdict_reads
from sponsio_audit.row_order import report_order
from sponsio_audit.threads import background
from sponsio_audit.totals import Summary, summary
from sponsio_audit.verdicts import as_stored
from sponsio_audit.vocab import SEVERITIES, VERDICTS

SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
VERDICT_ORDER = VERDICTS
DECISION_RESULTS = ("blocked", "escalated", "warned", "redirected", "observed", "allowed")
"""The guard's results (``guard.strategies.ACTIONS``), in report column order."""
DECISION_COLUMNS = (*DECISION_RESULTS, "other", "total")
"""Column headings of ``decision_cells``: ``other`` sums the results the guard does not name."""
GROUPED = "SELECT contract_id, verdict, count(*) AS n FROM verdicts GROUP BY ALL"
"""The verdicts counted per contract (``ReportData.counts_by_contract``)."""
UNDECIDED = (
    "SELECT trace_id, contract_id, guarantee, verdict, reason FROM verdicts "
    "WHERE verdict IN ('unverifiable', 'skipped') ORDER BY contract_id, trace_id, guarantee"
)
"""The verdicts ``ReportData.undecided`` lists."""
_UNDECIDED = frozenset(verdict_reads.UNDECIDED)
MAX_TIMELINE_TRACES = 100
MAX_TIMELINE_EVENTS = 500


@dataclass(frozen=True)
class ReportData:
    """The tables of one audit, as plain Python rows (small: verdict-sized, not event-sized).

    ``violations`` holds every offending row (``blamed`` marks the violation
    itself); ``events`` holds the events of violated traces only, by trace.
    ``suppressed`` counts violations hidden by a baseline. ``guard_decisions``
    counts the ``decisions`` table per contract × result (function
    ``guard_decisions``). ``verdict_rows``
    (the whole ``verdicts`` table, one row per trace × guarantee) is loaded
    only on request (``load(…, verdict_rows=True)``: JUnit lists every
    trace of every contract, with ``trace_files``: the input files of each
    trace); everything else uses the grouped counts. ``undecided`` holds the
    unverifiable and skipped verdicts with their recorded ``reason``;
    ``provenance`` what ran, when, on what (``api.provenance``; empty for an
    audit stored before it existed).
    """

    totals: dict[str, int]
    files: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    contracts: list[dict[str, Any]]
    verdict_counts: dict[str, int]
    per_contract: list[dict[str, Any]]
    violation_table: pa.Table
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    suppressed: int = 0
    verdict_rows: list[dict[str, Any]] = field(default_factory=list, repr=False)
    counts_by_contract: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)
    guard_decisions: list[dict[str, Any]] = field(default_factory=list)
    undecided: list[dict[str, Any]] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    trace_files: dict[str, list[str]] = field(default_factory=dict, repr=False)

    @cached_property
    def violations(self) -> list[dict[str, Any]]:
        """``violation_table`` as Python rows (for the renderers that walk rows; the JSON
        report reads the Arrow table)."""
        rows: list[dict[str, Any]] = self.violation_table.to_pylist()
        return rows

    @cached_property
    def _blamed_mask(self) -> pa.Array:
        return pc.fill_null(self.violation_table.column("blamed").combine_chunks(), False)

    @cached_property
    def blamed(self) -> list[dict[str, Any]]:
        """One row per violation (the blamed event), in report order (only these rows are
        made Python dicts; counts need none: ``blamed_column``)."""
        rows: list[dict[str, Any]] = self.violation_table.filter(self._blamed_mask).to_pylist()
        return rows

    def blamed_column(self, name: str) -> pa.Array:
        """One column of the ``blamed`` rows, as Arrow (a count or a summary line makes no
        Python row)."""
        column = self.violation_table.column(name).combine_chunks()
        return column.filter(self._blamed_mask)

    def blamed_counts(self, name: str) -> dict[Any, int]:
        """How many ``blamed`` rows hold each value of column ``name``."""
        counts = pc.value_counts(self.blamed_column(name))
        values = counts.field("values").to_pylist()
        return dict(zip(values, counts.field("counts").to_pylist(), strict=True))

    @cached_property
    def _contracts_by_id(self) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in reversed(self.contracts)}

    def contract(self, cid: str) -> dict[str, Any]:
        """The ``contracts`` row of ``cid`` (a stub when unknown)."""
        found = self._contracts_by_id.get(cid)
        if found is not None:
            return found
        return {
            "id": cid,
            "agent": "*",
            "description": "",
            "severity": "high",
            "strategy": "block",
            "guarantees": [],
            "patterns": [],
            "skipped": [],
        }

    def without(self, keys: set[tuple[str, str, int]], suppressed: int) -> ReportData:
        """A copy without the violations of (trace, contract, guarantee) ``keys``."""
        t = self.violation_table
        cols = [t.column(k).to_pylist() for k in ("trace_id", "contract_id", "guarantee")]
        keep = pa.array([k not in keys for k in zip(*cols, strict=True)], pa.bool_())
        kept = t.filter(keep)
        return replace(
            self,
            violation_table=kept,
            per_contract=_per_contract(self.contracts, self.counts_by_contract, kept),
            suppressed=self.suppressed + suppressed,
            totals={**self.totals, "violations": _blamed_count(kept)},
        )


def arrow(store: Store, sql: str) -> pa.Table:
    """The Arrow table of a query (``to_arrow_table`` in DuckDB 2, ``arrow`` before)."""
    rel = store.con.cursor().sql(sql)  # own cursor: no clash with an unfinished result
    fetch = getattr(rel, "to_arrow_table", None) or rel.arrow
    table: pa.Table = fetch()
    return table


def _rows(store: Store, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = store.con.cursor().execute(sql, params or [])
    names = [d[0] for d in cur.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _tables(store: Store) -> set[str]:
    """The names of the store's tables and views (one query for every ``_has`` of ``load``)."""
    rows = store.con.cursor().execute("SELECT table_name FROM information_schema.tables")
    return {name for (name,) in rows.fetchall()}


def _blamed_count(viol: pa.Table) -> int:
    return int(pc.sum(pc.cast(viol.column("blamed"), pa.int64())).as_py() or 0)


def _coded(column: pa.ChunkedArray) -> tuple[np.ndarray, list[Any]]:
    """(per-row index, distinct values) of a non-null string or dictionary column."""
    whole = column.combine_chunks()
    enc = whole if pa.types.is_dictionary(whole.type) else pc.dictionary_encode(whole)
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return codes, enc.dictionary.to_pylist()


def _per_contract(
    contracts: list[dict[str, Any]],
    counts: dict[str, dict[str, int]],
    viol: pa.Table,
) -> list[dict[str, Any]]:
    stats: dict[str, dict[str, int]] = {}
    if viol.num_rows:  # per contract: blamed rows, distinct traces, rows (NumPy counts)
        code, ids = _coded(viol.column("contract_id"))
        trace, _ = _coded(viol.column("trace_id"))
        blamed = pc.fill_null(viol.column("blamed"), False).to_numpy(zero_copy_only=False)
        width = int(trace.max()) + 1
        columns = {
            "blamed_sum": np.bincount(code, weights=blamed.astype(np.int64), minlength=len(ids)),
            "trace_id_count_distinct": _distinct_per(code, trace, len(ids), width),
            "count_all": np.bincount(code, minlength=len(ids)),
        }
        for i, cid in enumerate(ids):
            stats[cid] = {name: int(col[i]) for name, col in columns.items()}
    out = []
    for c in contracts:
        mine = stats.get(c["id"], {})
        out.append(
            {
                "contract_id": c["id"],
                "severity": c["severity"],
                "verdicts": {**dict.fromkeys(VERDICTS, 0), **counts.get(c["id"], {})},
                "violations": int(mine.get("blamed_sum") or 0),
                "traces_violated": int(mine.get("trace_id_count_distinct") or 0),
                "events_blamed": int(mine.get("count_all") or 0),
                "skipped_reasons": sorted({s for s in c["skipped"] if s}),
            }
        )
    return out


def _distinct_per(code: np.ndarray, other: np.ndarray, size: int, width: int) -> np.ndarray:
    """Per code 0..size-1, how many distinct ``other`` codes (0..width-1) its rows hold: a
    table of the pairs seen where it is small (no sort), else the sorted distinct pairs."""
    pairs = code * width + other
    if size * width > 8 * len(pairs) + 65536:
        return np.bincount(np.unique(pairs) // width, minlength=size)
    seen = np.zeros(size * width, dtype=bool)
    seen[pairs] = True
    return np.count_nonzero(seen.reshape(size, width), axis=1)


def guard_decisions(store: Store, tables: set[str] | None = None) -> list[dict[str, Any]]:
    """The guard's recorded decisions counted per contract id × result.

    One row per contract id: ``contract_id`` (None for the calls no contract
    checked), ``results`` (every ``DECISION_RESULTS`` key, then any other
    recorded result in sorted order; a missing result counts as
    ``"unknown"``) and ``total``. Sorted by contract id, None last. ``tables``: the store's
    table names, when known already.
    """
    if "decisions" not in (_tables(store) if tables is None else tables):
        return []
    grouped = _rows(store, "SELECT contract_id, result, count(*) AS n FROM decisions GROUP BY ALL")
    by_id: dict[str | None, dict[str, int]] = {}
    for g in grouped:
        counts = by_id.setdefault(g["contract_id"], {})
        key = "unknown" if g["result"] is None else str(g["result"])
        counts[key] = counts.get(key, 0) + int(g["n"])
    out = []
    for cid in sorted(by_id, key=lambda c: (c is None, c or "")):
        counts = by_id[cid]
        extra = sorted(k for k in counts if k not in DECISION_RESULTS)
        results = {k: counts.get(k, 0) for k in (*DECISION_RESULTS, *extra)}
        out.append({"contract_id": cid, "results": results, "total": sum(counts.values())})
    return out


def decision_cells(row: dict[str, Any]) -> list[int]:
    """Counts of a ``guard_decisions`` row in column order: ``DECISION_RESULTS``, other, total."""
    res = row["results"]
    other = sum(n for k, n in res.items() if k not in DECISION_RESULTS)
    return [*(int(res.get(k, 0)) for k in DECISION_RESULTS), other, int(row["total"])]


def load(
    store: Store,
    *,
    timelines: bool = True,
    verdict_rows: bool = False,
    violations: pa.Table | None = None,
    verdicts: pa.Table | None = None,
    totals: Summary | None = None,
) -> ReportData:
    """Read a finished audit back from ``store`` (after ``api.audit``).

    ``timelines``: load the events of violated traces (HTML); ``verdict_rows``:
    load the whole verdicts table (JUnit). ``violations`` and ``verdicts``: the audit's own
    tables (``AuditResult``), the rows the store's tables were made of (or would have been:
    ``api.audit(lean=True)`` stores neither); they are used as the store would give them
    back (its types, ``verdicts.as_stored``), not read back (a copy of 43 MB for
    ``bench/scan.py``'s 160k violation rows). ``totals``: the audit's own ``summary(store)``
    (``AuditResult.summary``), not asked of the store again (a dozen queries).
    """
    tables = _tables(store)
    given = {"verdicts": verdicts, "violations": violations}
    for name in ("verdicts", "violations", "contracts"):
        if name not in tables and given.get(name) is None:
            raise LookupError(f"the store holds no {name!r} table: run `scan --db FILE` first")
    if verdicts is None:  # counted by DuckDB (outside the GIL) while the violations are readied
        grouping = background("counts", _counted, store)
    else:
        grouping = background("counts", verdict_reads.counts_by_contract, verdicts)
    try:
        files = _rows(store, "SELECT * FROM files ORDER BY file_id")
        skipped = _rows(
            store,
            "SELECT s.file_id, f.path, s.record, s.reason FROM skipped s "
            "LEFT JOIN files f USING (file_id) ORDER BY s.file_id, s.record",
        )
        contracts = _rows(store, "SELECT * FROM contracts ORDER BY id")
        if violations is None:
            stored = arrow(store, "SELECT * FROM violations")
        else:  # the stored table's own types (plain strings where the engine has dictionaries)
            stored = as_stored(violations)
        viol = report_order(_with_paths(stored, files))
    finally:
        wait([grouping])  # no query left running on the store
    by_contract = grouping.result()
    total = summary(store) if totals is None else totals
    counted = {
        "files": total.files,
        "records": total.records,
        "spans": total.spans,
        "events": total.events,
        "skipped": total.skipped,
        "traces": total.traces,
        "contracts": total.contracts,
        "violations": total.violations,
    }
    events: dict[str, list[dict[str, Any]]] = {}
    if timelines:
        ids = sorted(pc.unique(viol.column("trace_id")).to_pylist())[:MAX_TIMELINE_TRACES]
        for tid in ids:
            events[tid] = trace_events(store, tid)
    return ReportData(
        totals=counted,
        files=files,
        skipped=skipped,
        contracts=contracts,
        verdict_counts=dict(total.verdicts),
        per_contract=_per_contract(contracts, by_contract, viol),
        violation_table=viol,
        events=events,
        verdict_rows=_all_verdicts(store, verdicts) if verdict_rows else [],
        counts_by_contract=by_contract,
        guard_decisions=guard_decisions(store, tables),
        undecided=_undecided(store, verdicts)
        if any(set(c) & _UNDECIDED for c in by_contract.values())
        else [],  # none counted: no scan of the verdicts for them
        provenance=_provenance(store, tables),
        trace_files=_trace_files(store) if verdict_rows else {},
    )


def _counted(store: Store) -> dict[str, dict[str, int]]:
    """``GROUPED`` of the store's verdicts: {contract id: {verdict: count}}."""
    out: dict[str, dict[str, int]] = {}
    for g in _rows(store, GROUPED):
        out.setdefault(g["contract_id"], {})[g["verdict"]] = int(g["n"])
    return out


def _all_verdicts(store: Store, verdicts: pa.Table | None) -> list[dict[str, Any]]:
    if verdicts is not None:
        return verdict_reads.all_rows(verdicts)
    return _rows(store, "SELECT * FROM verdicts ORDER BY trace_id, contract_id, guarantee")


def _undecided(store: Store, verdicts: pa.Table | None) -> list[dict[str, Any]]:
    return verdict_reads.undecided(verdicts) if verdicts is not None else _rows(store, UNDECIDED)


def _with_paths(viol: pa.Table, files: list[dict[str, Any]]) -> pa.Table:
    """``viol`` with the ``path`` of each row's input file appended (null when unknown)."""
    ids = pa.array([f["file_id"] for f in files], pa.int64())
    paths = pa.array([f["path"] for f in files], pa.string())
    at = pc.index_in(viol.column("file_id"), value_set=ids)
    return viol.append_column("path", pc.take(paths, at))


def _provenance(store: Store, tables: set[str]) -> dict[str, Any]:
    if "provenance" not in tables:
        return {}
    rows = _rows(store, "SELECT doc FROM provenance")
    doc: dict[str, Any] = json.loads(rows[0]["doc"]) if rows else {}
    return doc


def _trace_files(store: Store) -> dict[str, list[str]]:
    """The input files each trace's events came from (sorted paths)."""
    rows = _rows(
        store,
        "SELECT e.trace_id, list(DISTINCT f.path ORDER BY f.path) AS paths "
        "FROM events e JOIN files f USING (file_id) GROUP BY e.trace_id",
    )
    return {r["trace_id"]: list(r["paths"]) for r in rows}


def trace_events(store: Store, trace_id: str) -> list[dict[str, Any]]:
    """The events of one trace in order (capped at ``MAX_TIMELINE_EVENTS``)."""
    return _rows(
        store,
        "SELECT seq, start_ns, agent, type, tool, args, content, "
        f"{prompt_sql('e')} AS prompt, span_id "
        "FROM events e WHERE trace_id = ? ORDER BY seq LIMIT ?",
        [trace_id, MAX_TIMELINE_EVENTS],
    )
