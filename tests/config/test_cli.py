"""``sponsio-audit validate``, ``patterns`` and ``atoms`` through the typer app."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sponsio_audit.cli import app
from sponsio_audit.config.documents import SPONSIO_PACKS_DIR

DATA = Path(__file__).parent / "data"
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_validate_ok_exits_0_with_a_summary() -> None:
    code, out, _ = run("validate", str(DATA / "all_patterns.yaml"))
    assert code == 0
    assert "1 file(s), 1 agent(s), 10 contract(s)" in out
    assert "G(called(issue_refund) -> O called(check_policy))" in out
    assert "redirect → log_refund_request" in out


def test_validate_packs_lists_skipped_and_ignored() -> None:
    code, out, _ = run("validate", *map(str, sorted(SPONSIO_PACKS_DIR.glob("*.yaml"))))
    assert code == 0
    assert "needs an LLM judge" in out and "regex uses lookaround" in out
    assert "beta (13×)" in out and "tools (10×)" in out


def test_validate_errors_exit_2_one_line_each(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(
        "agents:\n  bot:\n    contracts:\n"
        "      - G: {pattern: rate_limit, args: [pay, '[red]x']}\n"
        "      - G: please be careful\n"
    )
    code, _, err = run("validate", str(p))
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == (
        f"{p}:4: agents.bot.contracts[0].G.args[1]: rate_limit: max_count: "
        "expected a whole number, got '[red]x'"
    )
    assert lines[1].startswith(f"{p}:5: agents.bot.contracts[1].G: natural-language")
    assert lines[-1] == "2 error(s)"


def test_validate_markup_in_yaml_is_printed_as_text(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text("agents:\n  '[bold]bot':\n    contracts:\n"
                 "      - {id: '[red]x', G: 'called `a`'}\n")  # fmt: skip
    code, out, _ = run("validate", str(p))
    assert code == 0
    assert "[bold]bot" in out and "[red]x" in out


def test_patterns_lists_the_registry() -> None:
    code, out, _ = run("patterns")
    assert code == 0
    for name in ("must_precede", "latency_budget", "untrusted_source_gate", "jailbreak_free"):
        assert name in out
    assert "skipped (LLM judge)" in out and "redirect" in out


def test_patterns_packs_lists_shipped_packs() -> None:
    code, out, _ = run("patterns", "--packs")
    assert code == 0
    assert "default" in out and "sponsio:incident/openclaw" in out and "45" in out


def test_atoms_lists_the_atom_registry() -> None:
    code, out, _ = run("atoms")
    assert code == 0
    assert "consecutive_count" in out and "llm_output_contains (llm_said)" in out
