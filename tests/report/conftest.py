"""Fixtures for the report tests: a local CLI app, the demo corpus, and trace builders.

Expected values come from ``fixtures/make_demo.py`` (what it plants), never
from the tool's own output.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from sponsio_audit.cli import explain, report, scan

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo"
TRACES = DEMO / "traces"
CONFIG = DEMO / "sponsio.yaml"


def _load_demo() -> Any:
    spec = importlib.util.spec_from_file_location("make_demo", REPO / "fixtures" / "make_demo.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_demo"] = mod
    spec.loader.exec_module(mod)
    return mod


demo = _load_demo()


def make_app() -> typer.Typer:
    """A Typer app with the commands ``scan``, ``report`` and ``explain`` of ``cli``."""
    app = typer.Typer()
    app.command()(scan)
    app.command()(report)
    app.command()(explain)
    return app


APP = make_app()


def run(*args: str | Path) -> Any:
    """Run the CLI in-process (200 columns); the click ``Result`` (stdout, stderr, exit_code)."""
    runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
    return runner.invoke(APP, [str(a) for a in args], catch_exceptions=False)


def planted() -> set[tuple[str, str]]:
    """(trace id, contract id) of every violation the demo generator planted."""
    return {(demo.trace_id(name), cid) for name, cid, _tool in demo.PLANTED}


def write_traces(path: Path, service: str, builders: dict[str, Any]) -> Path:
    """Write demo-style traces (name → builder of ``make_demo``) as OTLP/JSON lines."""
    lines = [demo._json_line(pb) for pb in demo._record(service, builders)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def native_trace(path: Path, events: list[dict[str, Any]]) -> Path:
    """A Sponsio native trace file (one JSON event per line)."""
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


UNVERIFIABLE, SKIPPED = "bot.no_rm", "bot.judge"
"""The contracts of ``undecided_corpus``: one unverifiable verdict, one skipped."""


def undecided_corpus(tmp: Path) -> tuple[Path, Path]:
    """A native trace whose ``bash`` call records no arguments, audited by an
    ``arg_blacklist`` over ``bash``'s ``command`` (the field is missing: unknown, so
    *unverifiable*, never pass: SEMANTICS §2) and by ``jailbreak_free`` (an LLM-judge
    constraint: *skipped*); (trace file, sponsio.yaml)."""
    trace = native_trace(
        tmp / "t.jsonl",
        [
            {"ts": 1, "agent": "bot", "type": "tool_call", "tool": "bash"},
            {"ts": 2, "agent": "bot", "type": "tool_call", "tool": "read_file", "args": {"p": 1}},
        ],
    )
    cfg = tmp / "c.yaml"
    cfg.write_text(
        "agents:\n  bot:\n    contracts:\n"
        f"      - id: {UNVERIFIABLE}\n        severity: medium\n        G:\n"
        "          pattern: arg_blacklist\n          args: [bash, command, ['rm\\s']]\n"
        f"      - id: {SKIPPED}\n        G:\n          pattern: jailbreak_free\n"
    )
    return trace, cfg


@pytest.fixture(scope="session")
def demo_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The JSON report of the demo corpus with its ``sponsio.yaml``."""
    out = tmp_path_factory.mktemp("demo") / "report.json"
    res = run("scan", TRACES, "--contracts", CONFIG, "--format", "json", "--output", out)
    assert res.exit_code == 1, res.output
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB file holding an audit of the demo corpus (``scan --db``)."""
    db = tmp_path_factory.mktemp("db") / "audit.duckdb"
    res = run("scan", TRACES, "--contracts", CONFIG, "--db", db, "--quiet")
    assert res.exit_code == 1, res.output
    return db
