"""Blocked and redirected calls are ``tool_attempt`` events (SEMANTICS.md §4.2, "Attempts")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ingest = pytest.importorskip("sponsio_audit.ingest")


def read(path: Path) -> tuple[list[dict], list[dict]]:
    store = ingest.Store.open(None)
    ingest.ingest([path], store)

    def rows(sql: str) -> list[dict]:
        rel = store.con.sql(sql)
        return (getattr(rel, "to_arrow_table", None) or rel.arrow)().to_pylist()

    return rows("SELECT * FROM events ORDER BY seq"), rows("SELECT * FROM decisions ORDER BY ts")


def test_session_log_attempts_in_both_result_forms(tmp_path: Path) -> None:
    lines = [
        # this project's guard: result is a string
        {"ts": 1.0, "agent_id": "bot", "action": "verify", "constraint": "c1", "result": "allowed"},
        {"ts": 2.0, "agent_id": "bot", "action": "pay", "constraint": "c1", "result": "blocked"},
        {"ts": 2.0, "agent_id": "bot", "action": "pay", "constraint": "c2", "result": "allowed"},
        # Sponsio's own guard: result is {"action", "message"}
        {
            "ts": 3.0,
            "agent_id": "bot",
            "action": "delete",
            "constraint": "c3",
            "result": {"action": "redirected", "message": "use archive"},
        },
        {
            "ts": 4.0,
            "agent_id": "bot",
            "action": "ls",
            "constraint": "c4",
            "result": {"action": "warned", "message": "careful"},
        },
    ]
    path = tmp_path / "20260101_000000_1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    events, decisions = read(path)
    assert [(e["tool"], e["type"]) for e in events] == [
        ("verify", "tool_call"),
        ("pay", "tool_attempt"),  # one constraint blocked it: it never ran
        ("delete", "tool_attempt"),  # redirected: the safe tool ran instead
        ("ls", "tool_call"),  # warned calls run
    ]
    assert [(d["tool"], d["result"], d["message"]) for d in decisions] == [
        ("verify", "allowed", None),
        ("pay", "blocked", None),
        ("pay", "allowed", None),
        ("delete", "redirected", "use archive"),
        ("ls", "warned", "careful"),
    ]
