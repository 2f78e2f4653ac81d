"""SARIF plain-text messages embed no link planted by trace content.

SARIF 2.1.0 §3.11.6: ``message.text`` may hold embedded links
``[text](id or URI)`` (an integer id points at a related location), and a
literal ``[`` or ``]`` is written ``\\[`` / ``\\]``. A tool named
``[fix](1)`` must therefore reach every message escaped, and the log stay
valid against the OASIS schema (``tests/report/data``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from tests.report.conftest import native_trace, run

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
TOOL = "[fix](1) C:\\tmp\\[x]"
CONTRACT = (
    'agents:\n  "*":\n    contracts:\n      - id: only_read\n        G:\n'
    "          pattern: tool_allowlist\n          args: [read_file]\n"
)


def _sarif(tmp_path: Path) -> dict[str, Any]:
    trace = native_trace(
        tmp_path / "t.jsonl",
        [{"ts": 1, "agent": "bot", "type": "tool_call", "tool": TOOL, "args": {}}],
    )
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONTRACT)
    out = tmp_path / "out.sarif"
    assert run("scan", trace, "-c", cfg, "-f", "sarif", "-o", out).exit_code == 1
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return doc


def _unescape(text: str) -> str:
    """``text`` read as a SARIF plain-text message; fails on an embedded link (a bare ``[``)."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "\\[]":
            out.append(text[i + 1])
            i += 2
            continue
        assert ch not in "[]", f"unescaped bracket at {i}: {text!r}"
        out.append(ch)
        i += 1
    return "".join(out)


def test_brackets_in_trace_content_are_escaped_and_the_log_stays_valid(tmp_path: Path) -> None:
    doc = _sarif(tmp_path)
    (result,) = doc["runs"][0]["results"]
    text = result["message"]["text"]
    assert "\\[fix\\](1)" in text
    assert "C:\\\\tmp\\\\\\[x\\]" in text  # the backslashes of the name are escaped too
    assert f"tool {TOOL}, " in _unescape(text)  # read back, the name is as recorded
    related = [r["message"]["text"] for r in result["relatedLocations"]]
    assert related and all(f"tool {TOOL}, " in _unescape(t) for t in related)
    assert result["properties"]["tool"] == TOOL  # properties are data, not messages
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message[:200]}" for e in errors[:5]]
    assert doc["version"] == "2.1.0"
