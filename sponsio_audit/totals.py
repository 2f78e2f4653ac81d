"""``Summary``: the totals of one stored audit, as reports and the exit code read them.

``summary(store)`` reads them from the store's tables (``report --db``); ``api.audit`` hands
it the verdict and violation tables it just stored, so that their counts come from Arrow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.ingest import Store
from sponsio_audit.verdicts import count_by
from sponsio_audit.vocab import KINDS, SEVERITIES, VERDICTS


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
    regex_timeouts: int = 0  # lookaround-regex searches that ran out of time (atom unknown)

    @property
    def violations(self) -> int:
        """Number of violations (blamed rows of the ``violations`` table)."""
        return sum(self.violations_by_severity.values())


TRACES = "SELECT count(*) FROM (SELECT trace_id FROM events UNION SELECT trace_id FROM traces)"
"""Every trace read, with events or without."""


def summary(store: Store, audited: tuple[pa.Table, pa.Table] | None = None) -> Summary:
    """The totals of the audit stored in ``store`` (after ``audit``), read from its tables;
    the verdict and violation counts from ``audited`` (the verdicts and violations just
    stored, as Arrow: counted without three GROUP BY queries over the stored rows)."""

    def scalar(sql: str) -> int:
        rows = store.con.cursor().execute(sql).fetchall()  # own cursor, as in ``replace_tables``
        return int(rows[0][0] or 0) if rows else 0

    def counts(sql: str, order: Sequence[str]) -> dict[str, int]:
        out = dict.fromkeys(order, 0)
        for key, n in store.con.cursor().execute(sql).fetchall():
            out[str(key)] = int(n)
        return out

    if audited is None:
        verdicts = counts(
            "SELECT verdict, count(*) FROM verdicts GROUP BY ALL ORDER BY 1", VERDICTS
        )
        kinds = counts(
            "SELECT kind, count(*) FROM verdicts WHERE verdict = 'violated' GROUP BY ALL "
            "ORDER BY 1",
            KINDS,
        )
        severities = counts(
            "SELECT severity, count(*) FROM violations WHERE blamed GROUP BY ALL ORDER BY 1",
            SEVERITIES,
        )
    else:
        v, w = audited[0].select(["verdict", "kind"]), audited[1].select(["severity", "blamed"])
        verdicts = count_by(v, "verdict", VERDICTS)
        kinds = count_by(v.filter(pc.equal(v.column("verdict"), "violated")), "kind", KINDS)
        severities = count_by(w.filter(w.column("blamed")), "severity", SEVERITIES)
    return Summary(
        files=scalar("SELECT count(*) FROM files"),
        records=scalar("SELECT coalesce(sum(records), 0) FROM files"),
        spans=scalar(f"SELECT count(*) FROM {store.span_table}"),
        events=scalar("SELECT count(*) FROM events"),
        skipped=scalar("SELECT count(*) FROM skipped"),
        traces=scalar(TRACES),
        contracts=scalar("SELECT count(*) FROM contracts"),
        verdicts=verdicts,
        violations_by_kind=kinds,
        violations_by_severity=severities,
        skipped_clauses=scalar("SELECT count(s) FROM (SELECT unnest(skipped) AS s FROM contracts)"),
        regex_timeouts=_regex_timeouts(store),
    )


def _regex_timeouts(store: Store) -> int:
    """Lookaround-regex timeouts of the stored audit (0 for a store written before they were)."""
    try:
        rows = store.con.cursor().execute("SELECT sum(regex_timeouts) FROM audit_stats").fetchall()
    except duckdb.CatalogException:
        return 0
    return int(rows[0][0] or 0) if rows else 0
