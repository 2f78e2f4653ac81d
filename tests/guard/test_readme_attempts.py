"""The README's guard example, audited afterwards, shows no violation of the call the
guard stopped (SEMANTICS.md §4.2, "Attempts"), and lists the guard's decision."""

from __future__ import annotations

from pathlib import Path

import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import load_config
from sponsio_audit.guard import Guard, ToolBlocked

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo" / "sponsio.yaml"


def test_readme_guard_example_audits_clean(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    guard = Guard(str(DEMO), agent_id="support_bot", session_log=log, exporter=False)

    @guard.guarded
    def check_policy(order: str) -> str:
        return "refundable"

    @guard.guarded
    def issue_refund(order: str, amount: int) -> str:
        return f"refunded {amount}"

    with pytest.raises(ToolBlocked):
        issue_refund("A-1", 30)  # no check_policy yet: the call never ran
    check_policy("A-1")
    issue_refund("A-1", 30)
    guard.finish()

    result = audit([log], load_config(DEMO))
    events = result.store.con.sql("SELECT tool, type FROM events ORDER BY seq").fetchall()
    assert events == [
        ("issue_refund", "tool_attempt"),
        ("check_policy", "tool_call"),
        ("issue_refund", "tool_call"),
    ]
    assert result.violations.num_rows == 0  # the stopped call is not reported again
    decisions = result.store.con.sql(
        "SELECT contract_id, result FROM decisions WHERE result = 'blocked'"
    ).fetchall()
    assert decisions == [("support.policy_before_refund", "blocked")]
    result.store.close()
