"""``sponsio-audit traces`` lists every trace that was judged, also one with no events.

A trace whose spans carry nothing the conventions turn into an event (here a
plain HTTP span, written by the real OpenTelemetry SDK) is still a trace: the
audit judges it as a trace of length 0 (SEMANTICS.md: an empty trace is read
and judged), so the listing must show it, with 0 events and its verdicts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.conftest import REPO, cli

sys.path.insert(0, str(REPO / "fixtures"))
from make_otel import FixedIds, spans_request, to_json

GENAI = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "issue_refund"}


def test_a_trace_without_events_is_listed_with_its_verdicts(tmp_path: Path) -> None:
    trees = [
        {"name": "execute_tool issue_refund", "attrs": GENAI, "start": 0, "end": 1},
        {"name": "GET /health", "attrs": {"http.request.method": "GET"}, "start": 2, "end": 3},
    ]
    req = spans_request(trees, "shop", FixedIds(trace_base=0xFEED << 64))
    traces = tmp_path / "spans.jsonl"
    traces.write_text(json.dumps(to_json(req)) + "\n")
    contracts = tmp_path / "sponsio.yaml"
    contracts.write_text(
        "agents:\n  '*':\n    contracts:\n      - id: policy-first\n"
        "        G: {pattern: must_precede, args: [check_policy, issue_refund]}\n"
    )
    res = cli("traces", traces, "-c", contracts, "--format", "json")
    assert res.exit_code == 0, res.stderr
    listed = {r["trace_id"]: r for r in json.loads(res.stdout)}
    refund, health = f"{(0xFEED << 64) + 1:032x}", f"{(0xFEED << 64) + 2:032x}"
    assert set(listed) == {refund, health}
    assert listed[refund]["events"] == 1
    assert listed[refund]["verdicts"]["violated"] == 1  # refund without a policy check
    assert listed[health]["events"] == 0
    # G(...) over a trace of length 0 holds vacuously: one verdict, not a violation
    assert sum(listed[health]["verdicts"].values()) == 1
    assert listed[health]["verdicts"]["violated"] == 0
