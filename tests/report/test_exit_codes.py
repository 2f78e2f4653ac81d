"""Exit codes of ``scan``: 0, 1 (by --fail-on level), 2 (usage/config), 3 (--strict)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.conftest import CONFIG, REPO, TRACES, demo, run, write_traces


@pytest.fixture(scope="module")
def clean_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clean") / "clean.jsonl"
    return write_traces(
        path, "support-bot", {n: demo.SUPPORT_TRACES[n] for n in ("refund-ok-1", "refund-ok-2")}
    )


@pytest.fixture(scope="module")
def low_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Only the runaway test loop: one violation, of a ``low`` contract."""
    path = tmp_path_factory.mktemp("low") / "loop.jsonl"
    return write_traces(path, "coding-agent", {"coder-loop": demo.CODING_TRACES["coder-loop"]})


def test_clean_traces_exit_0(clean_file: Path) -> None:
    res = run("scan", clean_file, "-c", CONFIG)
    assert res.exit_code == 0, res.output


def test_demo_exits_1_and_fail_on_none_exits_0() -> None:
    assert run("scan", TRACES, "-c", CONFIG, "-q").exit_code == 1
    assert run("scan", TRACES, "-c", CONFIG, "-q", "--fail-on", "none").exit_code == 0


@pytest.mark.parametrize(("level", "code"), [("high", 0), ("medium", 0), ("low", 1), ("none", 0)])
def test_fail_on_levels(low_only: Path, level: str, code: int) -> None:
    assert run("scan", low_only, "-c", CONFIG, "-q", "--fail-on", level).exit_code == code


def test_config_error_exit_2_one_line_each(tmp_path: Path, clean_file: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "agents:\n  bot:\n    contracts:\n"
        "      - id: a\n        bogus_key: 1\n        G: {pattern: idempotent, args: [x]}\n"
        "      - id: b\n        G: {pattern: no_such_pattern, args: [x]}\n"
    )
    res = run("scan", clean_file, "-c", bad)
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) >= 2
    assert all(ln.startswith(str(bad)) for ln in lines)
    assert any("contracts[0].bogus_key" in ln for ln in lines)
    assert any("contracts[1]" in ln for ln in lines)


def test_usage_errors_exit_2(tmp_path: Path, clean_file: Path) -> None:
    assert run("scan", clean_file, "-c", CONFIG, "--format", "pdf").exit_code == 2
    assert run("scan", clean_file, "-c", CONFIG, "--fail-on", "urgent").exit_code == 2
    res = run("scan", tmp_path / "missing.jsonl", "-c", CONFIG)
    assert res.exit_code == 2 and "no such file" in res.stderr
    res = run("scan", clean_file, "-c", CONFIG, "--baseline", tmp_path / "nope.json")
    assert res.exit_code == 2


def test_strict_input_errors_exit_3(tmp_path: Path, clean_file: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text(clean_file.read_text() + '{"resourceSpans": [ truncated\n')
    assert run("scan", broken, "-c", CONFIG, "-q").exit_code == 0
    assert run("scan", broken, "-c", CONFIG, "-q", "--strict").exit_code == 3
    # the demo's metrics file is a skipped input too; 3 wins over 1
    assert run("scan", TRACES, "-c", CONFIG, "-q", "--strict").exit_code == 3


def test_help_documents_exit_codes() -> None:
    res = run("scan", "--help")
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())
    for phrase in ("0 no violation", "1 violations", "2 usage or configuration", "3 input"):
        assert phrase in text


def test_default_pack_finds_demo_violations() -> None:
    if not (REPO / "sponsio_audit" / "packs" / "default.yaml").exists():
        pytest.skip("sponsio_audit/packs/default.yaml is not written yet (another engineer's file)")
    res = run("scan", TRACES, "--format", "json", "--fail-on", "none")
    assert res.exit_code == 0, res.output
    import json

    doc = json.loads(res.stdout)
    assert doc["summary"]["violations"] > 0
    assert {v["trace_id"] for v in doc["violations"]} & {
        t for t, _ in __import__("tests.report.conftest", fromlist=["planted"]).planted()
    }
