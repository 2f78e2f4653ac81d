"""Wide and deep contracts load and evaluate through the CLI; deeper ones fail clearly (issue 13).

A 5 000-regex blocklist and a formula nested 1 000 deep raised RecursionError
(ltl/ast.py walk, validate) before. Expected verdicts are by hand: regex
number 4 999 matches the planted command; 1 000 negations cancel out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .otlp import line, request, sid, tid, tool_span

REGEXES = 5000
DEPTH = 1000


def _traces(d: Path) -> Path:
    """Trace 1 runs a command matching blocklist regex 4 999; trace 2 runs ``ls``."""
    p = d / "traces.jsonl"
    p.write_bytes(
        line(request(tool_span(tid(1), sid(1), "bash", {"command": f"echo bad{REGEXES - 1}x"})))
        + line(request(tool_span(tid(2), sid(2), "bash", {"command": "ls"})))
    )
    return p


def _contract(d: Path, guarantee: dict[str, object]) -> Path:
    p = d / "sponsio.yaml"
    doc = {
        "version": "1",
        "agents": {"*": {"contracts": [{"id": "hostile.c", "severity": "high", "G": [guarantee]}]}},
    }
    p.write_text(json.dumps(doc))  # JSON is YAML
    return p


def _scan(d: Path, contract: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = d / "report.json"
    cmd = [sys.executable, "-m", "sponsio_audit.cli", "scan", str(_traces(d))]
    cmd += ["-c", str(contract), "-f", "json", "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in res.stderr + res.stdout, res.stderr[-3000:]
    return res, json.loads(out.read_text()) if out.exists() else {}


def _violated(doc: dict) -> list[str]:
    return sorted(v["trace_id"] for v in doc["violations"])


def test_five_thousand_regex_blocklist(tmp_path: Path) -> None:
    """``arg_blacklist`` with 5 000 regexes: the trace matching the last but one is violated."""
    regexes = [f"bad{i}x" for i in range(REGEXES)]
    res, doc = _scan(
        tmp_path,
        _contract(tmp_path, {"pattern": "arg_blacklist", "args": ["bash", "command", regexes]}),
    )
    assert res.returncode == 1, res.stderr[-2000:]
    assert _violated(doc) == [tid(1)]


def test_formula_nested_a_thousand_deep(tmp_path: Path) -> None:
    """``G(!(!(…called(bash)…)))`` with 1 000 + 1 negations is ``G(!called(bash))``: both
    traces call bash, so both are violated."""
    inner = "!(" * DEPTH + "called(bash)" + ")" * DEPTH
    res, doc = _scan(tmp_path, _contract(tmp_path, {"ltl": f"G(!({inner}))"}))
    assert res.returncode == 1, res.stderr[-2000:]
    assert _violated(doc) == [tid(1), tid(2)]
    valid = subprocess.run(
        [sys.executable, "-m", "sponsio_audit.cli", "validate", str(tmp_path / "sponsio.yaml")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert valid.returncode == 0 and "Traceback" not in valid.stderr, valid.stderr[-2000:]


def test_formula_deeper_than_the_limit_is_a_clear_error(tmp_path: Path) -> None:
    """100 000 levels: exit 2, one line naming the file and the limit, no traceback."""
    inner = "!(" * 100_000 + "called(bash)" + ")" * 100_000
    contract = _contract(tmp_path, {"ltl": f"G({inner})"})
    res, _ = _scan(tmp_path, contract)
    assert res.returncode == 2
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and str(contract) in lines[0] and "limit frames=" in lines[0], lines
    assert "contracts[0].G[0].ltl" in lines[0], lines  # the YAML path
