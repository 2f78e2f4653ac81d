"""Nothing audited is not a pass: no input file (4), no trace (5), no contract (6)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import CONFIG, TRACES, cli, demo, write_traces


def test_empty_folder_exits_4_with_a_reason(tmp_path: Path) -> None:
    res = cli("scan", tmp_path, "-c", CONFIG)
    assert res.exit_code == 4
    assert res.stderr.startswith("error: no input file in ")
    assert len(res.stderr.splitlines()) == 1
    assert cli("scan", tmp_path, "-c", CONFIG, "--allow-empty").exit_code == 0


def test_folder_of_yaml_exits_5(tmp_path: Path) -> None:
    shutil.copy(CONFIG, tmp_path / "sponsio.yaml")
    (tmp_path / "more.yaml").write_text("a: 1\n")
    res = cli("scan", tmp_path, "-c", CONFIG)
    assert res.exit_code == 5
    assert "error: no trace in 2 input files" in res.stderr
    assert cli("scan", tmp_path, "-c", CONFIG, "--allow-empty").exit_code == 0


def test_config_without_contracts_exits_6(tmp_path: Path) -> None:
    empty = tmp_path / "sponsio.yaml"
    empty.write_text('version: "1"\nagents: {}\n')
    res = cli("scan", TRACES, "-c", empty)
    assert res.exit_code == 6
    assert "no contract to check" in res.stderr and str(empty) in res.stderr
    assert cli("scan", TRACES, "-c", empty, "--allow-empty", "-q").exit_code == 0


def test_agent_filter_that_leaves_nothing_exits_6(tmp_path: Path) -> None:
    only_bot = tmp_path / "bot.yaml"
    only_bot.write_text(
        'version: "1"\nagents:\n  support_bot:\n    contracts:\n'
        "      - {id: once, G: {pattern: idempotent, args: [issue_refund]}}\n"
    )
    res = cli("scan", TRACES, "-c", only_bot, "--agent", "planner")
    assert res.exit_code == 6 and "for agent planner" in res.stderr


@pytest.fixture(scope="module")
def coder_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("coder") / "coder.jsonl"
    return write_traces(path, "coding-agent", {"coder-ok": demo.CODING_TRACES["coder-ok"]})


def test_contracts_for_absent_agents_warn_and_fail_with_strict(coder_only: Path) -> None:
    res = cli("scan", coder_only, "-c", CONFIG)
    assert res.exit_code == 0, res.output
    warning = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1
    # the demo's sponsio.yaml has contracts for support_bot, coder and the workflow's agents
    assert "apply to no trace" in warning[0]
    assert "agents in traces: coder" in warning[0]
    assert "support_bot" in warning[0].split("contracts are for:")[1]
    strict = cli("scan", coder_only, "-c", CONFIG, "--strict")
    assert strict.exit_code == 3
    assert any(
        ln.startswith("error:") and "apply to no trace" in ln for ln in strict.stderr.splitlines()
    )


def test_pack_that_resolves_to_nothing_checkable_exits_6() -> None:
    # a Sponsio template pack with no contract of its own, and one whose every clause
    # needs an LLM judge (skipped offline): nothing would be decided
    res = cli("scan", TRACES, "--pack", "sponsio:core/runaway")
    assert res.exit_code == 6 and "no contract to check" in res.stderr
    res = cli("scan", TRACES, "--pack", "sponsio:core/llm_safety")
    assert res.exit_code == 6 and "skipped offline" in res.stderr
