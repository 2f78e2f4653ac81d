"""``--parquet DIR``: every table of an audit as Parquet, and an audit read back from them.

One ``NAME.parquet`` per store table (``files``, ``skipped``, ``spans``,
``events``, ``decisions``, ``verdicts``, ``violations``, ``contracts`` and
any other table the store holds, except ``span_facts``, ingest's staging),
written with ``pyarrow.parquet`` (zstd), or by Spark as a directory of the
same name (``scan --engine spark``); readers take either. Columns are the
store's (ARCHITECTURE.md "Store schema"); ``violations.parquet`` adds two:

``violations.parquet`` — one row per offending event of a violated guarantee,
ordered by (trace_id, contract_id, guarantee, seq): trace_id, contract_id,
guarantee (index in the contract), guarantee_text (formula), kind (guarantee
| liveness | assumption), severity (high | medium | low), strategy (block |
escalate | warn | redirect), seq (step of the event in its trace), blamed
(true for the event the violation is blamed on, one per violation), span_id,
tool, agent, evidence (one sentence, never argument values), opened_seq
(step that opened a liveness obligation), file_id, record (record number in
the file; the line for JSON lines), then ``path`` (input file) and
``fingerprint`` (baseline fingerprint on blamed rows, null otherwise, made
from the ``contracts`` table, so any writer can make it).

``verdicts.parquet`` — one row per (trace, contract, guarantee), ordered by
those. ``events.parquet`` — the normalised events (SEMANTICS.md §1), ordered
by (trace_id, seq), written as recorded (not redacted): the file is for
analysis next to the original traces. A request's input that starts the same
agent's next input is stored once, as in the store: ``prompt`` null,
``prompt_from`` the seq of the request that holds it, ``prompt_chars`` its
length (its first ``prompt_chars`` characters; ``event.shared_prompt``).

``api.read_parquet(DIR)`` loads the files into a store (reports never write
to one), so ``report --parquet DIR`` renders any report from them, as
``report --db`` does from a store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sponsio_audit.ingest import Store
from sponsio_audit.ingest.store import prompt_sql
from sponsio_audit.report import baseline
from sponsio_audit.report.data import arrow

FILES = ("violations.parquet", "verdicts.parquet", "events.parquet")
"""The files notebooks read most (every other table is written beside them)."""

INTERNAL = ("span_facts",)
"""Store tables that are not written (ingest's staging)."""

ORDER = {
    "violations": "trace_id, contract_id, guarantee, seq",
    "verdicts": "trace_id, contract_id, guarantee",
    "events": "trace_id, seq",
    "files": "file_id",
    "skipped": "file_id, record",
    "contracts": "id",
}
EXTRA = ("path", "fingerprint")
"""Columns ``violations.parquet`` adds to the store's ``violations``."""


def _names(store: Store) -> list[str]:
    rows = store.con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "ORDER BY table_name"
    ).fetchall()
    return [r[0] for r in rows if r[0] not in INTERNAL]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


BLAMED_EVENTS = (
    "SELECT e.trace_id, e.seq, e.tool, CAST(e.args AS VARCHAR) AS args, e.content, "
    f"{prompt_sql('e')} AS prompt "
    "FROM events e JOIN (SELECT DISTINCT trace_id, seq FROM violations WHERE blamed) v "
    "USING (trace_id, seq)"
)
"""The events blamed by a violation: what a fingerprint's matched argument is read from."""


def fingerprints(
    violations: pa.Table, contracts: pa.Table, events: pa.Table | None = None
) -> pa.Array:
    """The baseline fingerprint of every blamed row (null on the others), from the
    ``contracts`` table's rows and the blamed ``events`` (for the matched argument, as
    ``baseline.with_matches`` reads it): no report data needed."""
    by_id = {c["id"]: c for c in contracts.to_pylist()}
    at = {(e["trace_id"], e["seq"]): e for e in events.to_pylist()} if events is not None else {}
    out: list[str | None] = []
    for v in violations.to_pylist():
        if not v["blamed"]:
            out.append(None)
            continue
        c = by_id.get(v["contract_id"], {})
        e = at.get((v["trace_id"], v["seq"]))
        if e is not None:
            v = {**v, "matched": baseline.matched_argument(baseline.guarantee_text(v, c), e)}
        out.append(baseline.fingerprint(v, c))
    return pa.array(out, type=pa.string())


def with_path_and_fingerprint(
    violations: pa.Table, files: pa.Table, contracts: pa.Table, events: pa.Table | None = None
) -> pa.Table:
    """``violations`` with the input file's path and the fingerprint appended."""
    paths = {r["file_id"]: r["path"] for r in files.select(["file_id", "path"]).to_pylist()}
    ids = violations.column("file_id").to_pylist()
    out = violations.append_column("path", pa.array([paths.get(i) for i in ids], pa.string()))
    return out.append_column("fingerprint", fingerprints(violations, contracts, events))


def write(store: Store, data: Any = None, directory: str | Path | None = None) -> list[Path]:
    """Write every table of ``store`` into ``directory`` (created); their paths.

    ``data`` (the report data) is not needed; it is accepted for older callers.
    """
    if directory is None:
        raise TypeError("write() needs the directory")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    names = _names(store)
    for name in names:
        order = f" ORDER BY {ORDER[name]}" if name in ORDER else ""
        table = arrow(store, f"SELECT * FROM {_quoted(name)}{order}")
        if name == "violations":
            table = with_path_and_fingerprint(
                table,
                arrow(store, "SELECT * FROM files"),
                arrow(store, "SELECT * FROM contracts")
                if "contracts" in names
                else pa.table({"id": pa.array([], pa.string())}),
                arrow(store, BLAMED_EVENTS),
            )
        path = out / f"{name}.parquet"
        pq.write_table(table, path, compression="zstd")
        paths.append(path)
    return paths
