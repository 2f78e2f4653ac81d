"""``explain``: the timeline marks the blamed event, shows why, and redacts secrets."""

from __future__ import annotations

from pathlib import Path

from tests.report.conftest import CONFIG, TRACES, demo, run


def _explain(name: str, *extra: str) -> str:
    res = run("explain", TRACES, "-c", CONFIG, "--trace", demo.trace_id(name)[:10], *extra)
    assert res.exit_code == 0, res.output
    return " ".join(res.stdout.split())


def test_liveness_violation_names_formula_and_opening_event() -> None:
    out = _explain("wf-no-factcheck")
    assert "workflow.fact_check_drafts" in out
    assert "G(called(write_draft) -> F called(fact_check))" in out
    assert "liveness" in out and "obligation opened at step" in out
    assert "✗" in out


def test_secret_is_redacted_in_timeline() -> None:
    out = _explain("coder-secret")
    assert demo.AWS_KEY not in out
    assert "<redacted>" in out


def test_contract_filter_and_stored_audit(demo_db: Path) -> None:
    out = _explain("refund-twice", "--contract", "support.policy_before_refund")
    assert "No violation of contract support.policy_before_refund" in out
    res = run("explain", "--db", demo_db, "--trace", demo.trace_id("refund-twice"))
    assert res.exit_code == 0 and "support.refund_once" in res.stdout


def test_unknown_trace_is_usage_error() -> None:
    res = run("explain", TRACES, "-c", CONFIG, "--trace", "does-not-exist")
    assert res.exit_code == 2 and "no trace" in res.stderr


def test_demo_generator_is_deterministic(tmp_path: Path) -> None:
    demo.main(tmp_path)
    for f in sorted((tmp_path / "traces").iterdir()):
        assert f.read_bytes() == (TRACES / f.name).read_bytes(), f.name
