"""Baselines: write, rescan → nothing new, add a violating trace → exactly one new."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sponsio_audit.report import baseline
from tests.report.conftest import CONFIG, TRACES, demo, planted, run, write_traces


def test_round_trip(tmp_path: Path) -> None:
    base = tmp_path / "baseline.json"
    res = run("scan", TRACES, "-c", CONFIG, "-q", "--write-baseline", base)
    assert res.exit_code == 1
    doc = json.loads(base.read_text())
    assert doc["schema"] == baseline.SCHEMA
    assert {(e["trace_id"], e["contract_id"]) for e in doc["violations"]} == planted()

    res = run("scan", TRACES, "-c", CONFIG, "-f", "json", "--baseline", base)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["violations"] == []
    assert out["summary"]["suppressed"] == len(planted())
    table = run("scan", TRACES, "-c", CONFIG, "--baseline", base)
    assert f"{len(planted())} known violation(s) suppressed" in " ".join(table.stdout.split())

    # a copy of the corpus plus one new violating trace: exactly one new violation
    corpus = tmp_path / "corpus"
    shutil.copytree(TRACES, corpus)
    write_traces(
        corpus / "new.jsonl", "support-bot", {"refund-no-policy-new": demo._refund(False, 1)}
    )
    res = run("scan", corpus, "-c", CONFIG, "-f", "json", "--baseline", base)
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert [(v["trace_id"], v["contract_id"]) for v in out["violations"]] == [
        (demo.trace_id("refund-no-policy-new"), "support.policy_before_refund")
    ]
    assert out["summary"]["suppressed"] == len(planted())


def test_fingerprint_ignores_step_numbers() -> None:
    contract = {"patterns": [None]}
    v = {
        "contract_id": "c",
        "trace_id": "t",
        "tool": "bash",
        "guarantee": 0,
        "evidence": "bash at step 3 violates G !x",
    }
    moved = {**v, "evidence": "bash at step 17 violates G !x"}
    assert baseline.fingerprint(v, contract) == baseline.fingerprint(moved, contract)
    assert baseline.evidence_class(v, {"patterns": ["idempotent"]}) == "pattern:idempotent#0"
    other = {**v, "trace_id": "u"}
    assert baseline.fingerprint(v, contract) != baseline.fingerprint(other, contract)
