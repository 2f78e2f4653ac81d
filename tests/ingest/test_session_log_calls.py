"""Session-log lines that prove two tool calls are two events, even at one timestamp.

A session log has one line per (tool call × constraint) decision, grouped into one
call by (ts, action) (CONVENTIONS.md). A coarse clock (whole seconds, Windows) gives
two calls of one tool the same ts; merged, a "refund at most once" contract passed
on two refunds and the second call's arguments were lost. Lines with another ``seq``
(the guard's call number), or a constraint decided a second time, are another call.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.ingest.conftest import judged

TS = "2026-01-01T00:00:00Z"
ONCE = """version: "1"
agents:
  bot:
    contracts:
      - {id: refund_once, G: {ltl: "G(called(issue_refund) -> count(issue_refund) <= 1)"}}
"""


def _log(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "20260101_000000_1.jsonl"
    base = {"ts": TS, "agent_id": "bot", "action": "issue_refund", "result": "allowed"}
    path.write_text("".join(json.dumps({**base, **x}) + "\n" for x in lines))
    return path


def test_the_guards_call_numbers_separate_calls_at_one_ts(tmp_path: Path) -> None:
    path = _log(
        tmp_path,
        [
            {"seq": 0, "contract_id": "refund_once", "args": {"order": "A-1"}},
            {"seq": 0, "contract_id": "other", "args": {"order": "A-1"}},
            {"seq": 1, "contract_id": "refund_once", "args": {"order": "A-2"}},
            {"seq": 1, "contract_id": "other", "args": {"order": "A-2"}},
        ],
    )
    verdicts, events = judged(path, ONCE, tmp_path)
    assert [json.loads(e["args"]) for e in events] == [{"order": "A-1"}, {"order": "A-2"}]
    assert verdicts == {"refund_once": "violated"}


def test_a_constraint_decided_twice_is_a_second_call(tmp_path: Path) -> None:
    """Sponsio's own log has no seq: each call writes one line per constraint."""
    c1, c2 = "G(called(issue_refund) -> count(issue_refund) <= 1)", "G !called(delete)"
    two = _log(tmp_path, [{"constraint": c} for c in (c1, c2, c1, c2)])
    verdicts, events = judged(two, ONCE, tmp_path)
    assert len(events) == 2 and verdicts == {"refund_once": "violated"}
    one = _log(tmp_path, [{"constraint": c} for c in (c1, c2)])  # one call, two lines
    verdicts, events = judged(one, ONCE, tmp_path)
    assert len(events) == 1 and verdicts == {"refund_once": "pass"}
