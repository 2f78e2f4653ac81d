"""Pass 2 of ingest: the traces pass 1 could not finish, read back from ``span_facts``.

A trace's events need all its spans. Pass 1 (``inchunk``) builds them for the
traces that lie wholly inside one chunk; ``span_events`` recomputes every other
trace (or conversation) that received spans or GenAI log records in this run:
it reads the trace's ``span_facts`` rows back ordered by (trace, file,
position), fills a span's missing facts from its log records (``attach``),
cuts the stream at trace boundaries and computes each trace's events. A
trace's earlier events are replaced first, so a later file adding spans to it
is handled. ``cap_traces`` applies ``limits.spans_per_trace`` before that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sponsio_audit.ingest import attach, chunks
from sponsio_audit.ingest.conventions import FACT_FIELDS
from sponsio_audit.ingest.limits import LimitExceeded, Limits
from sponsio_audit.ingest.staging import LOCAL, Stage
from sponsio_audit.ingest.store import Store
from sponsio_audit.ingest.trace_events import ROW_FIELDS


def cap_traces(store: Store, run: int, limits: Limits) -> list[tuple[int, int]]:
    """Remove the records that add spans to a trace past ``limits.spans_per_trace``.

    Counted in the store (any number of traces); a trace over the bound keeps its
    first spans in (file, position) order, and every record holding a later one is
    removed and listed in ``skipped``. Returns the (file, record) pairs removed.
    """
    con, cap = store.con, limits.spans_per_trace
    bad = con.execute(
        """WITH big AS (SELECT trace_id FROM span_facts GROUP BY trace_id HAVING count(*) > $cap),
        ranked AS (SELECT f.file_id, f.record, f.run, row_number() OVER (
            PARTITION BY f.trace_id ORDER BY f.file_id, f.pos) AS n
            FROM span_facts f JOIN big USING (trace_id))
        SELECT DISTINCT file_id, record FROM ranked WHERE n > $cap AND run = $run
        ORDER BY 1, 2""",
        {"cap": cap, "run": run},
    ).fetchall()
    why = str(LimitExceeded("spans_per_trace", cap, "trace with more spans"))
    for file_id, record in bad:
        for table in ("spans", "span_facts"):
            con.execute(f"DELETE FROM {table} WHERE file_id = ? AND record = ?", [file_id, record])
        con.execute("INSERT INTO skipped VALUES (?, ?, ?)", [file_id, record, why])
        con.execute("UPDATE files SET skipped = skipped + 1 WHERE file_id = ?", [file_id])
    return [(int(f), int(r)) for f, r in bad]


def span_events(
    store: Store,
    run: int,
    group_by: str,
    batch_rows: int,
    workers_map: Callable[..., Iterator[chunks.Traced]],
    write: Callable[[chunks.Traced], None],
    stage: Stage | None,
    sole: bool = False,
) -> int:
    """Recompute events of every trace (or conversation) that received spans or GenAI log
    records in this run, except those ``stage`` holds whole from pass 1; each result goes
    to ``write`` (the stage's, when it kept traces). Returns the number of traces computed
    here plus those kept by the stage (``publish`` writes them). ``sole``: see
    ``Stage.settle``; when the stage then holds every trace whole, none is read back."""
    con = store.con
    runs = (
        "SELECT trace_id FROM span_facts WHERE run = $run "
        "UNION SELECT trace_id FROM span_logs WHERE run = $run"
    )
    if group_by == "conversation":
        key_sql = """WITH g AS (SELECT trace_id, coalesce(arg_min(conversation,
                       file_id * 1000000000000 + pos) FILTER (WHERE conversation IS NOT NULL),
                       trace_id) AS gkey FROM span_facts GROUP BY trace_id)"""
    else:
        key_sql = (
            "WITH g AS (SELECT DISTINCT trace_id, trace_id AS gkey "
            f"FROM span_facts WHERE trace_id IN ({runs}))"
        )
    touched = f"{key_sql}, t AS (SELECT DISTINCT gkey FROM g WHERE trace_id IN ({runs}))"
    params = {"run": run}
    for table in ("events", "traces", "decisions"):  # each DELETE evaluates ``touched``
        if not store.count(table):  # a fresh store: nothing to replace
            continue
        also = " AND file_id IN (SELECT DISTINCT file_id FROM span_facts)"
        con.execute(
            f"{touched} DELETE FROM {table} WHERE trace_id IN (SELECT gkey FROM t)"
            + (also if table == "decisions" else ""),
            params,
        )
    kept = stage.settle(sole) if stage is not None else 0
    if stage is not None and sole and stage.whole:  # the run's every trace is staged whole
        return kept
    if kept:  # pass 2 only for the touched traces the stage does not hold whole
        touched += f", r AS (SELECT gkey FROM t WHERE gkey NOT IN (SELECT trace_id FROM {LOCAL}))"
        rest = "r"
        left = con.execute(f"{touched} SELECT count(*) FROM r", params).fetchall()[0][0]
        if not left:
            return kept
    else:
        rest = "t"
    store.commit()  # attach reads span_logs through a cursor: it sees committed rows only
    logs = attach.log_facts_table(
        con, f"{touched} SELECT trace_id FROM g WHERE gkey IN (SELECT gkey FROM {rest})", params
    )
    con.register("_incoming_log_facts", logs)
    con.execute(f"CREATE OR REPLACE TABLE {attach.VIEW} AS SELECT * FROM _incoming_log_facts")
    con.unregister("_incoming_log_facts")
    base = ", ".join(f"f.{c}" for c in ROW_FIELDS[: ROW_FIELDS.index(FACT_FIELDS[0])])
    cols = f"{base}, {attach.fill_sql('f', 'lf')}"
    store.commit()  # the cursor below is a connection of its own: it reads committed rows
    cur = con.cursor()
    try:
        res = cur.sql(
            f"{touched} SELECT g.gkey, {cols} FROM span_facts f JOIN g USING (trace_id) "
            f"LEFT JOIN {attach.VIEW} lf ON lf.trace_id = f.trace_id AND lf.span_id = f.span_id "
            f"WHERE g.gkey IN (SELECT gkey FROM {rest}) ORDER BY g.gkey, f.file_id, f.pos",
            params=params,
        )
        traces = 0
        if res is not None:
            batches = chunks.trace_chunks(res.to_arrow_reader(batch_rows))
            for t in workers_map(chunks.events, batches):
                traces += t.traces
                write(t)
    finally:
        cur.close()  # ``store.con``, not ``con``: the writes above may still be running
        store.con.execute(f"DROP TABLE IF EXISTS {attach.VIEW}")
    return traces + kept
