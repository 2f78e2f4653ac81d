"""Guarded run → session log / captured OTLP export → ``sponsio-audit scan`` → guard decisions.

The real CLI (``sponsio_audit.cli.app``) scans what the guard wrote with the
same contracts file the guard enforced; the JSON report's ``guard_decisions``
must count the guard's own decisions (the ``Decision`` objects
``guard_before`` returned) per contract, and the re-evaluated violations must
name the same contracts at the same calls. Expected values come from the
decisions and from ``PLAN``, never from the scanner's output.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from sponsio_audit.guard import Decision, Guard, OtlpHttpExporter

from .test_otlp import Collector

pytest.importorskip("sponsio_audit.ingest")

CONTRACTS_YAML = """\
version: "1"
agents:
  "*":
    contracts:
      - id: ops.verify_before_pay
        severity: high
        G:
          pattern: must_precede
          args: [verify, pay]
      - id: ops.no_ls
        severity: low
        strategy: warn
        G:
          ltl: "G(!called(ls))"
      - id: ops.no_delete
        severity: medium
        strategy: redirect
        safe_tool: archive
        G:
          ltl: "G(!called(delete))"
      - id: ops.wire_needs_approval
        severity: medium
        strategy: escalate
        G:
          ltl: "G(!called(wire))"
"""
IDS = ("ops.verify_before_pay", "ops.no_ls", "ops.no_delete", "ops.wire_needs_approval")
# (tool, args, the action the test means to trigger, the contract that fires)
PLAN: list[tuple[str, dict[str, Any], str, str | None]] = [
    ("pay", {"amount": 1}, "blocked", "ops.verify_before_pay"),
    ("verify", {}, "allowed", None),
    ("pay", {"amount": 2}, "allowed", None),
    ("ls", {"dir": "/"}, "warned", "ops.no_ls"),
    ("delete", {"path": "/data/a"}, "redirected", "ops.no_delete"),
    ("wire", {"ok": True}, "escalated", "ops.wire_needs_approval"),
    ("wire", {"ok": False}, "blocked", "ops.wire_needs_approval"),  # escalation denied
    ("ls", {"dir": "/tmp"}, "warned", "ops.no_ls"),
    ("pay", {"amount": 3}, "allowed", None),
]


@pytest.fixture
def contracts_file(tmp_path: Path) -> Path:
    path = tmp_path / "sponsio.yaml"
    path.write_text(CONTRACTS_YAML, encoding="utf-8")
    return path


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.close()


def approve(d: Decision) -> bool:
    return bool(d.args.get("ok"))


def guarded_session(guard: Guard) -> list[Decision]:
    """Run ``PLAN`` through ``guard``; the decisions it returned (checked against the plan)."""
    out = [guard.guard_before(tool, args) for tool, args, _, _ in PLAN]
    assert guard.finish() == []  # no liveness contract: nothing open at the end
    guard.close()
    for d, (tool, _, action, fired) in zip(out, PLAN, strict=True):
        assert (d.tool, d.action) == (tool, action)
        assert [v.contract_id for v in d.violations] == ([fired] if fired else [])
        assert sorted(d.checked) == sorted(IDS)
    return out


def expected_counts(decisions: list[Decision]) -> dict[str, dict[str, int]]:
    """Per contract id: result → count, one per (decision × contract checked).

    A contract that fired takes the call's action; the others allowed it (the
    plan fires at most one contract per call, so that is unambiguous).
    """
    want: dict[str, Counter[str]] = {}
    for d in decisions:
        fired = {v.contract_id for v in d.violations}
        for cid in d.checked:
            want.setdefault(cid, Counter())[d.action if cid in fired else "allowed"] += 1
    return {cid: dict(c) for cid, c in want.items()}


def expected_violations(decisions: list[Decision]) -> set[tuple[str, int, str | None]]:
    """(contract id, call number, tool) of every call that ran and that a contract fired on.

    The calls the guard blocked or redirected never ran: the audit reads them as
    attempts and does not re-flag them (SEMANTICS.md §4.2, "Attempts").
    """
    return {(v.contract_id, d.seq, d.tool) for d in decisions if d.appended for v in d.violations}


def scan_json(tmp_path: Path, *args: str | Path) -> dict[str, Any]:
    """``sponsio-audit scan … --format json`` through the real CLI app; the parsed report."""
    from sponsio_audit.cli import app

    out = tmp_path / "report.json"
    argv = ["scan", *map(str, args), "--format", "json", "--output", str(out)]
    res = CliRunner().invoke(app, argv, catch_exceptions=False)
    # the only high-severity call (the unverified pay) was blocked: a guard that did
    # its job does not turn the audit red
    assert res.exit_code == 0, res.output
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    from importlib.resources import files

    schema = json.loads(files("sponsio_audit.report").joinpath("report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    return doc


def reported_counts(doc: dict[str, Any]) -> dict[str | None, dict[str, int]]:
    return {
        d["contract_id"]: {k: n for k, n in d["results"].items() if n}
        for d in doc["guard_decisions"]
    }


def reported_violations(doc: dict[str, Any]) -> set[tuple[str, int, str | None]]:
    out = set()
    for v in doc["violations"]:
        for e in [v["blamed"], *v["offending"]]:
            out.add((v["contract_id"], e["seq"], e["tool"]))
    return out


def test_session_log_scan_reads_decisions_back(
    tmp_path: Path, contracts_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = tmp_path / "sessions"
    monkeypatch.setenv("SPONSIO_SESSIONS_DIR", str(sessions))
    monkeypatch.delenv("SPONSIO_SESSION_LOG", raising=False)
    guard = Guard(contracts_file, "bot", mode="enforce", escalate=approve, exporter=False)
    decisions = guarded_session(guard)
    logs = list(sessions.rglob("*.jsonl"))
    assert len(logs) == 1 and logs[0].parent == sessions / "bot"

    doc = scan_json(tmp_path, sessions, "--contracts", contracts_file)
    assert reported_counts(doc) == expected_counts(decisions)
    assert {c["id"] for c in doc["contracts"]} == set(IDS)
    # the re-evaluation names the same contracts at the same calls as the guard
    assert {v["trace_id"] for v in doc["violations"]} == {doc["violations"][0]["trace_id"]}
    assert reported_violations(doc) == expected_violations(decisions)
    acted = {(v.contract_id, d.seq) for d in decisions if d.appended for v in d.violations}
    blamed = {(v["contract_id"], v["blamed"]["seq"]) for v in doc["violations"]}
    assert blamed <= acted and {cid for cid, _ in blamed} == {cid for cid, _ in acted}


def test_otlp_capture_scan_reads_verdicts_back(
    tmp_path: Path, contracts_file: Path, collector: Collector
) -> None:
    exporter = OtlpHttpExporter(collector.url, protocol="protobuf", service_name="svc")
    guard = Guard(
        contracts_file,
        "bot",
        mode="enforce",
        escalate=approve,
        session_log=False,
        exporter=exporter,
        conversation_id="conv-1",
    )
    decisions = guarded_session(guard)
    exporter.shutdown()
    assert collector.requests and exporter.dropped == 0
    captures = []
    for i, (path, headers, body) in enumerate(collector.requests):
        assert path == "/v1/traces" and headers["content-type"] == "application/x-protobuf"
        captures.append(tmp_path / f"capture-{i}.bin")
        captures[-1].write_bytes(body)

    doc = scan_json(tmp_path, *captures, "--contracts", contracts_file)
    want = expected_counts(decisions)
    got = reported_counts(doc)
    blocked = Counter(
        v.contract_id for d in decisions if d.action == "blocked" for v in d.violations
    )
    assert {cid: r.get("blocked", 0) for cid, r in got.items()} == {
        cid: blocked.get(cid, 0) for cid in IDS
    }
    assert got == want
    # one Guard session exports one trace id: read back as one trace without a flag
    assert {v["trace_id"] for v in doc["violations"]} == {doc["violations"][0]["trace_id"]}
    assert reported_violations(doc) == expected_violations(decisions)

    # grouped by the guard's conversation id, the export is one trace: same violations
    doc = scan_json(
        tmp_path, *captures, "--contracts", contracts_file, "--group-by", "conversation"
    )
    assert reported_counts(doc) == want
    assert reported_violations(doc) == expected_violations(decisions)
