"""The ``verdicts`` and ``violations`` tables (ARCHITECTURE.md store schema).

Both evaluation engines (reference and columnar) produce ``Finding`` rows
— one per (trace, contract, guarantee), positions mapped to event rows —
and this module turns them into the two Arrow tables that reports read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from sponsio_audit.evidence import describe
from sponsio_audit.ltl.contract import Contract

VERDICT_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string(), nullable=False),
        pa.field("contract_id", pa.string(), nullable=False),
        pa.field("guarantee", pa.int32(), nullable=False),
        pa.field("guarantee_text", pa.string()),
        pa.field("verdict", pa.string(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("blame_seq", pa.int64()),
        pa.field("opened_seq", pa.int64()),
        pa.field("offending", pa.int64()),
        pa.field("reason", pa.string()),
    ]
)
"""One row per (trace, contract, guarantee). ``offending`` counts offending events."""

VIOLATION_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string(), nullable=False),
        pa.field("contract_id", pa.string(), nullable=False),
        pa.field("guarantee", pa.int32(), nullable=False),
        pa.field("guarantee_text", pa.string()),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("severity", pa.string(), nullable=False),
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("seq", pa.int64()),
        pa.field("blamed", pa.bool_(), nullable=False),
        pa.field("span_id", pa.string()),
        pa.field("tool", pa.string()),
        pa.field("agent", pa.string()),
        pa.field("evidence", pa.string(), nullable=False),
        pa.field("opened_seq", pa.int64()),
        pa.field("file_id", pa.int64()),
        pa.field("record", pa.int64()),
    ]
)
"""One row per offending event of a violated guarantee (the blamed one flagged)."""


@dataclass(frozen=True)
class Finding:
    """One guarantee of one contract on one trace, positions already mapped to event rows.

    ``rows`` are indices into the events table: ``blame`` the blamed event,
    ``offending`` every offending event (blame included), ``opened`` the
    event that opened a liveness obligation.
    """

    trace_id: str
    contract: Contract
    guarantee: int
    verdict: str
    kind: str | None = None
    blame: int | None = None
    offending: tuple[int, ...] = ()
    opened: int | None = None
    reason: str | None = None


def build_tables(findings: Iterable[Finding], events: pa.Table) -> tuple[pa.Table, pa.Table]:
    """The ``verdicts`` and ``violations`` tables of ``findings`` (deterministic order)."""
    cols = {name: events.column(name) for name in ("seq", "span_id", "tool", "agent")}
    cols |= {name: events.column(name) for name in ("file_id", "record")}

    def at(name: str, row: int | None) -> object:
        return None if row is None else cols[name][row].as_py()

    ordered = sorted(findings, key=lambda f: (f.trace_id, f.contract.id, f.guarantee))
    vrows: dict[str, list[object]] = {n: [] for n in VERDICT_SCHEMA.names}
    xrows: dict[str, list[object]] = {n: [] for n in VIOLATION_SCHEMA.names}
    for f in ordered:
        clause = f.contract.guarantees[f.guarantee]
        text = clause.text
        for name, value in (
            ("trace_id", f.trace_id),
            ("contract_id", f.contract.id),
            ("guarantee", f.guarantee),
            ("guarantee_text", text),
            ("verdict", f.verdict),
            ("kind", f.kind),
            ("blame_seq", at("seq", f.blame)),
            ("opened_seq", at("seq", f.opened)),
            ("offending", len(f.offending)),
            ("reason", f.reason),
        ):
            vrows[name].append(value)
        if f.verdict != "violated":
            continue
        for row in sorted(set(f.offending) | ({f.blame} if f.blame is not None else set())):
            tool = at("tool", row)
            evidence = describe(
                f.contract,
                f.guarantee,
                f.kind or "guarantee",
                seq=at("seq", row),  # type: ignore[arg-type]
                tool=tool,  # type: ignore[arg-type]
                opened_seq=at("seq", f.opened),  # type: ignore[arg-type]
                opened_tool=at("tool", f.opened),  # type: ignore[arg-type]
            )
            for name, value in (
                ("trace_id", f.trace_id),
                ("contract_id", f.contract.id),
                ("guarantee", f.guarantee),
                ("guarantee_text", text),
                ("kind", f.kind),
                ("severity", f.contract.severity),
                ("strategy", f.contract.strategy.kind),
                ("seq", at("seq", row)),
                ("blamed", row == f.blame),
                ("span_id", at("span_id", row)),
                ("tool", tool),
                ("agent", at("agent", row)),
                ("evidence", evidence),
                ("opened_seq", at("seq", f.opened)),
                ("file_id", at("file_id", row)),
                ("record", at("record", row)),
            ):
                xrows[name].append(value)
    return (
        pa.table(vrows, schema=VERDICT_SCHEMA),
        pa.table(xrows, schema=VIOLATION_SCHEMA),
    )


def count_by(table: pa.Table, column: str, order: Sequence[str] = ()) -> dict[str, int]:
    """Counts of each value of ``column`` (keys of ``order`` first, always present)."""
    out = {k: 0 for k in order}
    if table.num_rows:
        for item in table.group_by(column).aggregate([([], "count_all")]).to_pylist():
            out[str(item[column])] = int(item["count_all"])
    return out
