"""Sponsio's evidence events (claim verdicts) in its own session logs, and the
factual-claims pack on them, through the real CLI.

Sponsio's ``SessionLogger`` (the oracle's own writer) records an evidence check as
the action ``<evidence:PRED>`` and no verdict: the claim's verdict is not in the
log, so ``claim_requires_evidence`` is unverifiable there, never a pass.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from typer.testing import CliRunner

from sponsio_audit.cli import app
from sponsio_audit.ingest.session_log import evidence_predicate

from . import oracle

PACK = Path(oracle.sponsio.__file__).parent / "contracts" / "capability" / "factual-claims.yaml"


def sponsio_log(tmp_path: Path, actions: list[str]) -> Path:
    """A session log written by Sponsio's own logger, one allowed check per action."""
    from sponsio.runtime.monitor import MonitorEvent
    from sponsio.runtime.session_log import SessionLogger
    from sponsio.runtime.strategies import EnforcementResult

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = SessionLogger("bot", base_dir=tmp_path, timestamp="20260101_000000")
        for a in actions:
            ok = EnforcementResult(action="allowed", message=f"PASSED: {a}")
            log(MonitorEvent(agent_id="bot", action=a, constraint_name="claims", result=ok))
    return Path(log.path)


def test_evidence_action_names_its_predicate() -> None:
    assert evidence_predicate("<evidence:city_zip_candidates>") == "city_zip_candidates"
    assert evidence_predicate("<evidence:>") == ""
    assert evidence_predicate("evidence:x") is None
    assert evidence_predicate("bash") is None


def test_claim_without_recorded_verdict_is_unverifiable_with_a_reason(tmp_path: Path) -> None:
    log = sponsio_log(tmp_path, ["lookup", "<evidence:date_weekday_agreement>"])
    out = tmp_path / "report.json"
    res = CliRunner().invoke(
        app, ["scan", str(log), "-c", str(PACK), "-f", "json", "--fail-on", "none", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"]["events"] == 2 and report["violations"] == []
    # the weekday claim cannot be decided; the other predicate's rules see no claim: pass
    assert report["summary"]["verdicts"]["unverifiable"] == 1
    assert report["summary"]["verdicts"]["pass"] == 2
    (undecided,) = report["undecided"]
    assert "evidence_verdict(date_weekday_agreement, PASS) unknown at step 1" in undecided["reason"]
    assert "recorded no verdict" in undecided["reason"]


def test_recorded_verdicts_decide_both_evidence_patterns(tmp_path: Path) -> None:
    """A log line that records the verdict and action (``args``) decides the rules: a
    MISMATCH claim violates claim_requires_evidence, an UNDERDETERMINED one released
    instead of clarified violates underdetermined_must_clarify."""
    lines = [
        {"ts": 1.0, "agent_id": "bot", "action": "<evidence:date_weekday_agreement>",
         "args": {"verdict": "MISMATCH", "action": "block"}, "result": "allowed"},
        {"ts": 2.0, "agent_id": "bot", "action": "<evidence:city_zip_candidates>",
         "args": {"verdict": "UNDERDETERMINED", "action": "release"}, "result": "allowed"},
    ]  # fmt: skip
    log = tmp_path / "20260101_000000_1.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = tmp_path / "report.json"
    res = CliRunner().invoke(
        app, ["scan", str(log), "-c", str(PACK), "-f", "json", "--fail-on", "none", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text(encoding="utf-8"))
    by_contract = {v["contract_id"]: v for v in report["violations"]}
    texts = {c["id"]: c["guarantees"][0]["text"] for c in report["contracts"]}
    fired = sorted(texts[c] for c in by_contract)
    assert fired == [
        "G(claim_emitted(city_zip_candidates) -> evidence_verdict(city_zip_candidates, PASS))",
        "G(claim_emitted(date_weekday_agreement) -> evidence_verdict(date_weekday_agreement, "
        "PASS))",
        "G(evidence_verdict(city_zip_candidates, UNDERDETERMINED) -> "
        "evidence_action(city_zip_candidates, clarify))",
    ]


def test_args_unknown_in_a_session_log_says_how_to_record_them(tmp_path: Path) -> None:
    """Sponsio's session log records the tool but not its arguments: an argument rule is
    unverifiable, and the reason says where the arguments are recorded (the guard's spans)."""
    log = sponsio_log(tmp_path, ["bash"])
    cfg = tmp_path / "sponsio.yaml"
    cfg.write_text(
        'version: "1"\nagents:\n  "*":\n    contracts:\n      - id: no-rm\n'
        "        G: {pattern: arg_blacklist, args: [bash, command, ['rm -rf']]}\n",
        encoding="utf-8",
    )
    out = tmp_path / "report.json"
    res = CliRunner().invoke(
        app, ["scan", str(log), "-c", str(cfg), "-f", "json", "--fail-on", "none", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    (undecided,) = json.loads(out.read_text(encoding="utf-8"))["undecided"]
    assert "export the guard's OTLP spans" in undecided["reason"], undecided["reason"]


def test_native_evidence_events_take_their_predicate_from_sponsio_key(tmp_path: Path) -> None:
    """A trace of Sponsio's own ``Event`` objects (``dataclasses.asdict``, one per line):
    the predicate of an evidence event is its ``key``; a MISMATCH claim violates the pack."""
    import dataclasses

    from sponsio.models.trace import Event as SponsioEvent

    events = [
        SponsioEvent(ts=1, agent="bot", event_type="tool_call", tool="lookup", args={"q": "x"}),
        SponsioEvent(
            ts=2, agent="bot", event_type="evidence", key="date_weekday_agreement",
            args={"verdict": "MISMATCH", "action": "block"},
        ),
    ]  # fmt: skip
    trace = tmp_path / "native.jsonl"
    trace.write_text("".join(json.dumps(dataclasses.asdict(e)) + "\n" for e in events))
    out = tmp_path / "report.json"
    res = CliRunner().invoke(
        app,
        ["scan", str(trace), "-c", str(PACK), "-f", "json", "--fail-on", "none", "-o", str(out)],
    )
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"]["events"] == 2 and report["summary"]["skipped"] == 0
    texts = {c["id"]: c["guarantees"][0]["text"] for c in report["contracts"]}
    assert [texts[v["contract_id"]] for v in report["violations"]] == [
        "G(claim_emitted(date_weekday_agreement) -> evidence_verdict(date_weekday_agreement, PASS))"
    ]
