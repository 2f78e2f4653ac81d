"""``traces`` lists ids with agents, events and verdicts; ``explain`` finds a trace by prefix."""

from __future__ import annotations

import json
from collections import Counter
from itertools import pairwise

from tests.cli.conftest import CONFIG, TRACES, cli, demo

ALL = [n for n, _c, _t in demo.PLANTED] + demo.CLEAN


def test_traces_lists_every_trace_with_verdicts() -> None:
    res = cli("traces", TRACES, "-c", CONFIG, "-f", "json")
    assert res.exit_code == 0
    rows = {t["trace_id"]: t for t in json.loads(res.stdout)}
    assert set(rows) == {demo.trace_id(n) for n in ALL}
    planted = Counter(demo.trace_id(n) for n, _c, _t in demo.PLANTED)
    for tid, row in rows.items():
        assert row["verdicts"]["violated"] == planted.get(tid, 0), tid
        assert row["events"] > 0 and row["agents"]
    assert rows[demo.trace_id("refund-twice")]["agents"] == "support_bot"
    table = cli("traces", TRACES, "-c", CONFIG)
    line = next(
        ln for ln in table.stdout.splitlines() if ln.startswith(demo.trace_id("coder-rm-rf"))
    )
    assert "\tcoder\t" in line


def test_explain_takes_a_case_insensitive_prefix_and_shows_span_and_source() -> None:
    tid = demo.trace_id("coder-rm-rf")
    res = cli("explain", TRACES, "-c", CONFIG, "--trace", tid[:6].upper(), "-f", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["trace_id"] == tid
    assert all(e["span_id"] for e in doc["events"])
    assert {e["file"] for e in doc["events"]} == {str(TRACES / demo.CODING)}
    assert all(isinstance(e["record"], int) for e in doc["events"])
    blamed = [e for e in doc["events"] if e["blamed"]]
    assert blamed and "coder.no_destructive_shell" in blamed[0]["blamed"]
    text = cli("explain", TRACES, "-c", CONFIG, "--trace", tid[:6]).stdout
    assert f"{TRACES / demo.CODING}:" in text and blamed[0]["span_id"] in text


def test_ambiguous_and_unknown_prefix() -> None:
    ids = sorted(demo.trace_id(n) for n in ALL)
    shared = next(a[:1] for a, b in pairwise(ids) if a[:1] == b[:1])
    res = cli("explain", TRACES, "-c", CONFIG, "--trace", shared)
    assert res.exit_code == 2 and "ambiguous" in res.stderr
    res = cli("explain", TRACES, "-c", CONFIG, "--trace", "zz-not-a-trace")
    assert res.exit_code == 2 and "unknown trace" in res.stderr


def test_unknown_contract_is_an_error() -> None:
    tid = demo.trace_id("refund-twice")
    res = cli("explain", TRACES, "-c", CONFIG, "--trace", tid, "--contract", "support.nope")
    assert res.exit_code == 2
    assert "unknown contract 'support.nope'" in res.stderr
