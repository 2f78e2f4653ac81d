"""The guard's recorded decisions in every report format, counted from hand-written session logs.

Expected counts are those of the lines each test writes, never the tool's output.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from sponsio_audit.ingest import Store
from sponsio_audit.report.data import DECISION_RESULTS, guard_decisions
from tests.report.conftest import CONFIG, TRACES, native_trace, run
from tests.report.test_terminal import CLEAR, _assert_inert, _pty_run

EVIL_ID = f"{CLEAR}evil[red]id[/red]<script>alert(1)</script>|`x`"
CONTRACTS = """agents:
  "*":
    contracts:
      - id: no_rm
        G:
          ltl: "G(!called(rm))"
"""

# (tool, contract id, result) per session-log line; lines of one call share (ts, action)
LINES: list[tuple[int, str, str | None, str | None]] = [
    (1, "read", "no_rm", "allowed"),
    (1, "read", "b.warn", "allowed"),
    (2, "rm", "no_rm", "blocked"),
    (2, "rm", "b.warn", "allowed"),
    (3, "ls", "no_rm", "allowed"),
    (3, "ls", "b.warn", "warned"),
    (4, "ls", "b.warn", "warned"),
    (5, "mv", "a.redirect", "redirected"),
    (6, "pay", "a.esc", "escalated"),
    (7, "pay", "a.esc", "blocked"),
    (8, "ping", None, "allowed"),  # a call no contract checks
    (9, "ls", "b.warn", "observed"),
    (10, "ls", "b.warn", "paused"),  # a result the guard does not name
    (11, "ls", "b.warn", None),
    (12, "x", EVIL_ID, "blocked"),
]


def session_log(path: Path, lines: list[tuple[int, str, str | None, str | None]]) -> Path:
    """A session log as the guard writes it (the fields ingest reads)."""
    rows: list[dict[str, Any]] = [
        {
            "ts": f"2025-01-01T00:00:{n:02d}.000000Z",
            "agent_id": "bot",
            "action": tool,
            "args": {},
            "event_type": "tool_call",
            "contract_id": cid,
            "constraint": None,
            "result": result,
            "message": "",
        }
        for n, tool, cid, result in lines
    ]
    return native_trace(path, rows)  # one JSON object per line


def expected(lines: list[tuple[int, str, str | None, str | None]]) -> dict[Any, Counter[str]]:
    out: dict[Any, Counter[str]] = {}
    for _, _, cid, result in lines:
        out.setdefault(cid, Counter())["unknown" if result is None else result] += 1
    return out


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("decisions")
    log = session_log(tmp / "session.jsonl", LINES)
    cfg = tmp / "c.yaml"
    cfg.write_text(CONTRACTS)
    return log, cfg


def _json(args: list[Any], tmp: Path) -> dict[str, Any]:
    out = tmp / "r.json"
    res = run(*args, "--format", "json", "--output", out)
    assert res.exit_code in (0, 1), res.output
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return doc


def test_json_counts_order_and_schema(logged: tuple[Path, Path], tmp_path: Path) -> None:
    log, cfg = logged
    doc = _json(["scan", log, "-c", cfg], tmp_path)
    schema = json.loads(files("sponsio_audit.report").joinpath("report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["schema"] == "sponsio-audit/report/1"
    got = doc["guard_decisions"]
    want = expected(LINES)
    named = sorted(k for k in want if k is not None)
    assert [d["contract_id"] for d in got] == [*named, None]  # sorted, no contract last
    for d in got:
        counts = want[d["contract_id"]]
        assert d["results"] == {**dict.fromkeys(DECISION_RESULTS, 0), **counts}
        assert list(d["results"])[: len(DECISION_RESULTS)] == list(DECISION_RESULTS)
        assert d["total"] == sum(counts.values())
    warn = next(d for d in got if d["contract_id"] == "b.warn")
    assert list(warn["results"])[len(DECISION_RESULTS) :] == ["paused", "unknown"]


def test_stored_audit_renders_the_same(logged: tuple[Path, Path], tmp_path: Path) -> None:
    log, cfg = logged
    db = tmp_path / "a.duckdb"
    assert run("scan", log, "-c", cfg, "--db", db, "--quiet").exit_code in (0, 1)
    first = _json(["scan", log, "-c", cfg], tmp_path)
    again = _json(["report", "--db", db], tmp_path)
    assert again["guard_decisions"] == first["guard_decisions"]


def test_load_without_decisions_table_is_empty() -> None:
    store = Store.open(None)
    store.con.execute("DROP TABLE decisions")
    assert guard_decisions(store) == []


def test_no_section_without_decisions(tmp_path: Path, demo_json: dict[str, Any]) -> None:
    assert demo_json["guard_decisions"] == []
    for fmt, marker in (("markdown", "Guard decisions"), ("html", "guard-decisions")):
        out = tmp_path / f"r.{fmt}"
        assert run("scan", TRACES, "-c", CONFIG, "-f", fmt, "-o", out).exit_code == 1
        assert marker not in out.read_text(encoding="utf-8")
    res = run("scan", TRACES, "-c", CONFIG)
    assert "Guard decisions" not in res.stdout


def test_markdown_section_escaped(logged: tuple[Path, Path], tmp_path: Path) -> None:
    log, cfg = logged
    out = tmp_path / "r.md"
    assert run("scan", log, "-c", cfg, "-f", "markdown", "-o", out).exit_code in (0, 1)
    text = out.read_text(encoding="utf-8")
    section = text[text.index("### Guard decisions") :]
    rows = {line.split(" | ")[0][2:]: line for line in section.splitlines() if line[:2] == "| "}
    assert rows["`no_rm`"] == "| `no_rm` | 1 | 0 | 0 | 0 | 0 | 2 | 0 | 3 |"
    assert rows["*(no contract)*"].endswith("| 0 | 1 | 0 | 1 |")
    assert "<script>" not in text and "\x1b" not in text
    assert "&lt;script&gt;" in section and "\\|\\`x\\`" in section and "\\[red\\]" in section


def test_html_section_escaped(logged: tuple[Path, Path], tmp_path: Path) -> None:
    log, cfg = logged
    out = tmp_path / "r.html"
    assert run("scan", log, "-c", cfg, "-f", "html", "-o", out).exit_code in (0, 1)
    page = out.read_text(encoding="utf-8")
    section = page[page.index('id="guard-decisions"') :]
    section = section[: section.index("</table>")]
    assert "<script>alert" not in page and "\x1b" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert (
        '<td class="mono">no_rm</td>'
        + "".join(f'<td class="num">{n}</td>' for n in (1, 0, 0, 0, 0, 2, 0, 3))
        in section
    )


def test_table_in_a_pty_is_inert(logged: tuple[Path, Path], tmp_path: Path) -> None:
    log, cfg = logged
    out = _pty_run(["scan", str(log), "-c", str(cfg)], tmp_path)
    _assert_inert(out)
    text = out.decode("utf-8", errors="replace")
    assert "Guard decisions" in text and "(no contract)" in text and "escalated" in text
