"""GenAI log records → the facts of their spans, across files and in any file order.

Log records (``span_logs``) and spans (``span_facts``) are joined by trace and
span id only when a trace's events are computed, so a logs file read before,
after or in another ingest run than its traces file gives the same events. A
span's own facts win field by field; its log records fill what the span did not
record (``fill_sql``), as a further row of CONVENTIONS.md's table would.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from sponsio_audit.ingest.conventions import FACT_FIELDS
from sponsio_audit.ingest.otlp_logs import log_facts

VIEW = "_span_log_facts"
"""Table of log facts (``trace_id``, ``span_id``, facts) that lives for one events pass."""

_TYPES = {"agent_scope": pa.bool_(), "tokens_in": pa.int64(), "tokens_out": pa.int64()}
_TYPES["tokens_total"] = pa.int64()
SCHEMA = pa.schema(
    [("trace_id", pa.string()), ("span_id", pa.string())]
    + [(k, _TYPES.get(k, pa.string())) for k in FACT_FIELDS]
)


def log_facts_table(con: duckdb.DuckDBPyConnection, touched_sql: str, params: dict) -> pa.Table:
    """Facts from the log records of every span of the traces ``touched_sql`` selects
    (a query giving ``trace_id``), one row per (trace, span) with log records."""
    cur = con.cursor()
    cur.execute(
        f"WITH t AS ({touched_sql}) SELECT trace_id, span_id, event_name, body, attributes "
        "FROM span_logs WHERE trace_id IN (SELECT trace_id FROM t) "
        "ORDER BY trace_id, span_id, time_ns NULLS LAST, file_id, record, pos",
        params,
    )
    out: list[tuple] = []
    key: tuple[str, str] | None = None
    group: list[tuple[str, str, str]] = []
    while batch := cur.fetchmany(10_000):
        for tid, sid, name, body, attrs in batch:
            if (tid, sid) != key:
                if key is not None:
                    out.append((*key, *log_facts("", group)))
                key, group = (tid, sid), []
            group.append((name, body, attrs))
    if key is not None:
        out.append((*key, *log_facts("", group)))
    cur.close()
    cols = list(zip(*out, strict=True)) if out else [()] * len(SCHEMA)
    return pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(cols, SCHEMA, strict=True)], schema=SCHEMA
    )


def fill_sql(alias: str, logs: str) -> str:
    """Select list of the fact columns: the span's (``alias``) own value, else its log
    records' (``logs``) when both say the same role, or the span said none."""
    same = f"({logs}.trace_id IS NOT NULL AND ({alias}.role IS NULL OR {alias}.role = {logs}.role))"
    cols = []
    for k in FACT_FIELDS:
        cols.append(f'CASE WHEN {same} THEN coalesce({alias}."{k}", {logs}."{k}") '
                    f'ELSE {alias}."{k}" END AS "{k}"')  # fmt: skip
    return ", ".join(cols)
