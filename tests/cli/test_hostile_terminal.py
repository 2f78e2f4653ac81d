"""Trace content never controls the terminal: agent names and trace ids are untrusted.

Escape sequences (OSC title, screen clear, colours), bidi overrides and line
separators written into a trace reach neither stderr's warnings nor ``explain``'s
lines and table titles; a one-line message stays one line. Found by a black-box
hunt: the "contracts apply to no trace" warning printed agent names raw, and
``explain`` its trace ids (as rich markup, on a wide terminal).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.conftest import cli, pty_run

HOSTILE = "x\x1b]0;PWNED\x07\x1b[2J\u202eevil\u2066\u061c\ufeff\u2028forged line"
MARKUP = "[link=https://evil.example]click[/link]"
_BAD = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029]"
)


def _span(trace: str, agent: str) -> str:
    kv = lambda k, v: {"key": k, "value": {"stringValue": v}}  # noqa: E731
    span = {
        "traceId": trace, "spanId": "01" * 8, "name": "execute_tool read_file",
        "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000000000500",
        "attributes": [kv("gen_ai.operation.name", "execute_tool"),
                       kv("gen_ai.tool.name", "read_file"), kv("gen_ai.agent.name", agent)],
    }  # fmt: skip
    res = {"attributes": [kv("service.name", "svc")]}
    return json.dumps({"resourceSpans": [{"resource": res, "scopeSpans": [{"spans": [span]}]}]})


def _files(tmp_path: Path) -> tuple[Path, Path]:
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        _span(HOSTILE + "A", HOSTILE) + "\n" + _span(HOSTILE + "B", "coder") + "\n"
        + _span(MARKUP, "coder") + "\n"
    )  # fmt: skip
    contracts = tmp_path / "c.yaml"
    contracts.write_text(
        'version: "1"\nagents:\n  "*":\n    contracts:\n'
        "      - {id: only.read, G: {pattern: tool_allowlist, args: [read_file]}}\n"
        "  support_bot:\n    contracts:\n"
        "      - {id: refund.once, G: {pattern: idempotent, args: [issue_refund]}}\n"
    )
    return traces, contracts


def test_agent_names_in_the_idle_contract_warning_are_inert(tmp_path: Path) -> None:
    traces, contracts = _files(tmp_path)
    r = cli("scan", traces, "-c", contracts, "--fail-on", "none", "-o", tmp_path / "r.json")
    warning = [ln for ln in r.stderr.splitlines() if "applies to no trace" in ln]
    assert len(warning) == 1 and "forged line" in warning[0]  # shown, on the same line
    assert not _BAD.search(r.stderr), ascii(r.stderr)


def test_explain_prints_hostile_trace_ids_inertly(tmp_path: Path) -> None:
    traces, contracts = _files(tmp_path)
    ambiguous = cli("explain", traces, "-c", contracts, "--trace", "x")
    assert "ambiguous trace" in ambiguous.stderr
    assert not _BAD.search(ambiguous.stderr), ascii(ambiguous.stderr)
    clean = cli("explain", traces, "-c", contracts, "--trace", HOSTILE + "A")
    assert "No violation of any contract in trace" in clean.stdout
    assert not _BAD.search(clean.stdout), ascii(clean.stdout)
    wide = pty_run(["explain", str(traces), "-c", str(contracts), "--trace", "[link"], 200)
    assert "\x1b]8;" not in wide and MARKUP in wide  # the id as text, no hyperlink planted


def test_a_hostile_path_in_an_error_line_stays_one_inert_line(tmp_path: Path) -> None:
    """A path with an escape sequence and a newline (a file name from an untrusted archive)
    printed raw set the terminal title and forged a second ``error:`` line."""
    bad = tmp_path / "x\x1b]0;T\x07\nerror: fake line"
    r = cli("scan", bad, "-c", tmp_path / "none.yaml")
    assert r.exit_code == 2
    assert len(r.stderr.splitlines()) == 1 and not _BAD.search(r.stderr), ascii(r.stderr)
