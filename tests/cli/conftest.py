"""Helpers for the command-line tests: the real app in process, the real process, a pty.

Expected values come from ``fixtures/make_demo.py`` (what it plants) and
from the demo's ``sponsio.yaml`` read with PyYAML, never from the tool's
own output.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from sponsio_audit.cli import app
from tests.report.conftest import CONFIG, DEMO, REPO, TRACES, demo, write_traces

__all__ = [
    "CONFIG",
    "DEMO",
    "REPO",
    "TRACES",
    "cli",
    "demo",
    "json_scan",
    "proc",
    "pty_run",
    "write_traces",
]


def cli(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    """Run the real app in process (stdout and stderr apart); the click ``Result``."""
    runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)
    finally:
        os.chdir(old)


def json_scan(trace_path: Path, out: Path, jobs: str) -> tuple[Any, dict[str, Any]]:
    """``scan TRACE_PATH --jobs JOBS -f json -o OUT`` in process with the demo's contracts:
    the click result, and the report's parts that do not depend on when it ran."""
    r = cli("scan", trace_path, "-c", CONFIG, "--jobs", jobs, "-f", "json", "-o", out)
    doc = json.loads(out.read_bytes())
    return r, {k: doc[k] for k in ("summary", "violations", "undecided", "inputs")}


def proc(
    *args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m sponsio_audit`` as a process (for what is about the process itself)."""
    full_env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "sponsio_audit", *map(str, args)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=120,
    )


def pty_run(args: list[str], columns: int, cwd: Path | None = None) -> str:
    """Run ``python -m sponsio_audit ARGS`` with stdout and stderr on a pty of ``columns``."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    p = subprocess.Popen(
        [sys.executable, "-m", "sponsio_audit", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=cwd,
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def demo_severity() -> dict[str, str]:
    """Contract id → severity, read from the demo's sponsio.yaml (default high)."""
    doc = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    out = {}
    for body in doc["agents"].values():
        for c in body.get("contracts", []):
            out[c["id"]] = c.get("severity", "high")
    return out
