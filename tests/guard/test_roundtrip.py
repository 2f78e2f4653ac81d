"""Guarded run → session log file → ``sponsio_audit.ingest`` → reference audit: same violations."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.atoms.online import ground_events
from sponsio_audit.event import Event, event_from_row
from sponsio_audit.guard import Guard
from sponsio_audit.ltl.contract import Contract, judge

from .helpers import contract

ingest_mod = pytest.importorskip("sponsio_audit.ingest")

CONTRACTS = [
    contract("precede", "G(called(pay) -> O called(verify))"),
    contract("rate", "G(called(pay) -> count(pay) <= 2)"),
    contract("args", "G(called(rm) -> !arg_has(rm, '/etc'))"),
    contract("cool", "G(called(pay) -> !Y called(pay))"),
]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("pay", {"amount": 1}),
    ("verify", {}),
    ("pay", {"amount": 2, "password": "pw"}),
    ("pay", {"amount": 3}),
    ("rm", {"path": "/etc/passwd"}),
    ("verify", {}),
    ("pay", {"amount": 4}),
    ("rm", {"path": "/tmp/x"}),
    ("pay", {"amount": 5}),
]


def read_back(path: Path) -> list[Event]:
    store = ingest_mod.Store.open(None)
    ingest_mod.ingest([path], store)
    rel = store.con.sql("SELECT * FROM events ORDER BY trace_id, seq")
    rows = (getattr(rel, "to_arrow_table", None) or rel.arrow)()  # DuckDB 2 / before
    return [event_from_row(r) for r in rows.to_pylist()]


def audit(cs: list[Contract], events: list[Event]) -> set[tuple[str, int]]:
    out = set()
    for c in cs:
        trace = ground_events(c.atoms(), [e for e in events if e.type == "tool_call"])
        for v in judge(c, trace):
            if v.verdict == "violated" and v.kind == "guarantee":
                out |= {(c.id, p) for p in v.offending}
    return out


def guarded_run(tmp_path: Path, cs: list[Contract], mode: str) -> tuple[Guard, Path]:
    path = tmp_path / "session.jsonl"
    g = Guard(cs, "bot", mode=mode, session_log=path, exporter=False)
    for tool, args in CALLS:
        g.guard_before(tool, args)
    g.finish()
    return g, path


def decided(g: Guard) -> set[tuple[str, int]]:
    return {(v.contract_id, d.position) for d in g.decisions for v in d.violations}


def test_observe_round_trip(tmp_path: Path) -> None:
    g, path = guarded_run(tmp_path, CONTRACTS, "observe")
    events = read_back(path)
    assert [e.tool for e in events] == [t for t, _ in CALLS]
    assert events[2].args == {"amount": 2, "password": "<redacted>"}
    assert events[4].args == {"path": "/etc/passwd"}
    want = audit(CONTRACTS, events)
    assert want and decided(g) == want


def test_warn_round_trip(tmp_path: Path) -> None:
    cs = [contract(c.id, *(x.text for x in c.guarantees), strategy="warn") for c in CONTRACTS]
    g, path = guarded_run(tmp_path, cs, "enforce")
    assert {d.action for d in g.decisions} == {"allowed", "warned"}
    assert decided(g) == audit(cs, read_back(path))


def test_enforce_round_trip_of_calls_let_through(tmp_path: Path) -> None:
    g, path = guarded_run(tmp_path, CONTRACTS, "enforce")
    events = read_back(path)
    ran = [d for d in g.decisions if d.appended]
    blocked = [d for d in g.decisions if not d.appended]
    assert blocked and len(events) == len(g.decisions)  # every attempt is in the log
    # the log keeps blocked attempts; the audit of the calls that ran is clean
    let_through = [e for e, d in zip(events, g.decisions, strict=True) if d.appended]
    assert len(let_through) == len(ran) and audit(CONTRACTS, let_through) == set()
    # blocked calls read back as tool_attempt events, so the audit of the whole
    # session log is the audit of what ran: clean (SEMANTICS.md §4.2, "Attempts")
    assert [e.type for e in events] == [
        "tool_call" if d.appended else "tool_attempt" for d in g.decisions
    ]
    assert audit(CONTRACTS, events) == set()
    # and the attempts the guard blocked are each a fresh violation of what ran before them
    for d in blocked:
        before = [
            e for e, x in zip(events, g.decisions, strict=True) if x.appended and x.seq < d.seq
        ]
        attempt = replace(events[d.seq], type="tool_call")  # as if it had run
        got = {cid for cid, p in audit(CONTRACTS, [*before, attempt]) if p == len(before)}
        assert got == {v.contract_id for v in d.violations}
