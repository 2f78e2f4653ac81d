"""Listings never cut a name (on a terminal or piped, at any width) and have ``--format json``."""

from __future__ import annotations

import json

import pytest

from sponsio_audit.atoms.registry import ATOMS
from sponsio_audit.ltl.patterns import registry
from tests.cli.conftest import CONFIG, TRACES, cli, demo, demo_severity, pty_run

ATOM_NAMES = [a.name for a in ATOMS]
PATTERN_NAMES = list(registry())


def _lines_with(text: str, name: str) -> list[str]:
    return [ln for ln in text.splitlines() if name in ln]


@pytest.mark.parametrize("columns", ["40", "200"])
def test_piped_atoms_keep_each_row_on_one_line(columns: str) -> None:
    res = cli("atoms", env={"COLUMNS": columns})
    assert res.exit_code == 0
    row = _lines_with(res.stdout, "arg_field_has")
    assert len(row) == 1  # `sponsio-audit atoms | grep arg_field_has` finds the whole row
    assert "t: tool, f: field, re: regex" in row[0]
    for name in ATOM_NAMES:
        assert any(ln.split("\t")[0].split(" (")[0] == name for ln in res.stdout.splitlines())


def test_piped_patterns_and_validate_print_whole_names() -> None:
    res = cli("patterns", env={"COLUMNS": "40"})
    firsts = {ln.split("\t")[0] for ln in res.stdout.splitlines()}
    assert set(PATTERN_NAMES) <= firsts
    res = cli("validate", CONFIG, env={"COLUMNS": "40"})
    assert res.exit_code == 0
    firsts = {ln.split("\t")[0] for ln in res.stdout.splitlines()}
    assert set(demo_severity()) <= firsts


@pytest.mark.parametrize("columns", [60, 160])
def test_terminal_listings_keep_whole_names(columns: int) -> None:
    out = pty_run(["atoms"], columns)
    for name in ("arg_field_has", "llm_output_contains", "consecutive_count"):
        assert name in out, out[:2000]
    out = pty_run(["patterns"], columns)
    for name in ("untrusted_source_gate", "prompt_injection_marker", "segregation_of_duty"):
        assert name in out


def test_json_listings() -> None:
    atoms = json.loads(cli("atoms", "--format", "json").stdout)
    assert [a["atom"] for a in atoms] == ATOM_NAMES
    patterns = json.loads(cli("patterns", "-f", "json").stdout)
    assert [p["pattern"] for p in patterns] == PATTERN_NAMES
    packs = json.loads(cli("patterns", "--packs", "-f", "json").stdout)
    assert {"pack": "default"}.items() <= next(p for p in packs if p["pack"] == "default").items()
    doc = json.loads(cli("validate", CONFIG, "-f", "json").stdout)
    assert {c["id"]: c["severity"] for c in doc["contracts"]} == demo_severity()


@pytest.mark.parametrize("columns", [90, 260])
def test_terminal_explain_and_traces_keep_ids_and_sources_whole(columns: int) -> None:
    tid = demo.trace_id("coder-rm-rf")
    args = [str(TRACES), "-c", str(CONFIG)]
    out = pty_run(["explain", *args, "--trace", tid[:8]], columns)
    assert f"{TRACES / demo.CODING}:1" in out  # file:record of each event, uncut
    assert "coder.no_destructive_shell" in out
    out = pty_run(["traces", *args], columns)
    for name in ("coder-rm-rf", "wf-pii", "refund-twice"):
        assert demo.trace_id(name) in out
