"""``sponsio-audit traces``: the trace ids of the inputs, with agent, events and verdict counts.

The way to find the id that ``explain --trace`` wants.
"""

from __future__ import annotations

from sponsio_audit.cli import audited, listing
from sponsio_audit.cli.common import (
    AgentOpt,
    ContractsOpt,
    GroupBy,
    GroupByOpt,
    JobsOpt,
    ListFormat,
    ListFormatOpt,
    PackOpt,
    guarded,
)
from sponsio_audit.vocab import NOT_APPLICABLE, PASS, SKIPPED, UNVERIFIABLE, VIOLATED

VERDICTS = (VIOLATED, UNVERIFIABLE, PASS, NOT_APPLICABLE, SKIPPED)
"""The verdict columns of the listing, the ones that need attention first."""


def _listing_sql(with_empty: bool) -> str:
    """Traces with their agents and event counts; with ``with_empty``, also the traces
    that were read but gave no event (they are judged, so they are listed)."""
    per = (
        "SELECT trace_id, string_agg(DISTINCT agent, ', ' ORDER BY agent) AS agents, "
        "count(*) AS events FROM events GROUP BY trace_id"
    )
    if not with_empty:
        return f"{per} ORDER BY trace_id"
    return (
        f"WITH e AS ({per}), ids AS (SELECT trace_id FROM e UNION SELECT trace_id FROM traces) "
        "SELECT ids.trace_id, e.agents, coalesce(e.events, 0) AS events "
        "FROM ids LEFT JOIN e USING (trace_id) ORDER BY ids.trace_id"
    )


def traces(
    paths: audited.PathsArg = None,
    contracts: ContractsOpt = None,
    pack: PackOpt = None,
    db: audited.ReadDbOpt = None,
    group_by: GroupByOpt = GroupBy.trace,
    agent: AgentOpt = None,
    jobs: JobsOpt = 0,
    fmt: ListFormatOpt = ListFormat.table,
) -> None:
    """List the traces: id, agents, events, and verdict counts per trace.

    Example: sponsio-audit traces fixtures/demo/traces | grep violated
    """
    with guarded(db):
        store = audited.open_audit(
            paths or [], db, contracts or [], pack or [],
            group_by=group_by.value, agent=agent, jobs=jobs,
        )  # fmt: skip
        try:
            per_trace = audited.rows(store, _listing_sql(audited.has_table(store, "traces")))
            counts: dict[str, dict[str, int]] = {}
            if audited.has_table(store, "verdicts"):
                for r in audited.rows(
                    store,
                    "SELECT trace_id, verdict, count(*) AS n FROM verdicts GROUP BY ALL",
                ):
                    counts.setdefault(r["trace_id"], {})[r["verdict"]] = int(r["n"])
        finally:
            store.close()
    records = [
        {
            "trace_id": r["trace_id"],
            "agents": r["agents"] or "",
            "events": int(r["events"]),
            "verdicts": {v: counts.get(r["trace_id"], {}).get(v, 0) for v in VERDICTS},
        }
        for r in per_trace
    ]
    rows = [
        (
            rec["trace_id"],
            rec["agents"],
            rec["events"],
            *(rec["verdicts"][v] for v in VERDICTS),
        )
        for rec in records
    ]
    columns = ("trace", "agents", "events", "violated", "unverifiable", "pass", "n/a", "skipped")
    listing.show("traces", columns, rows, fmt=fmt.value, records=records, whole=columns)
