"""Terminal output in a pseudo-terminal: nothing from a trace reaches the terminal as a sequence."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report.conftest import REPO, native_trace

CLEAR = "\x1b[2J"
LINK = "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"
TOOL = f"{CLEAR}evil[red]tool[/red]"
ARGS = {"m": "[bold blink]markup[/]", "cmd": f"{LINK} {CLEAR}"}

RUNNER = """
import sys, typer
from sponsio_audit.cli import explain, scan
app = typer.Typer()
app.command()(scan)
app.command()(explain)
app()
"""


def _pty_run(args: list[str], tmp: Path) -> bytes:
    script = tmp / "runner.py"
    script.write_text(RUNNER)
    master, slave = pty.openpty()
    env = {
        **os.environ,
        "FORCE_COLOR": "1",
        "TERM": "xterm-256color",
        "COLUMNS": "160",
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, str(script), *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=tmp,
        close_fds=True,
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=60) in (0, 1), out.decode(errors="replace")[-3000:]
    return out


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("evil")
    trace = native_trace(
        tmp / "evil.jsonl",
        [
            {"ts": 1, "agent": "bot", "type": "tool_call", "tool": "read_file", "args": {"p": "a"}},
            {"ts": 2, "agent": "bot", "type": "tool_call", "tool": TOOL, "args": ARGS},
        ],
    )
    cfg = tmp / "c.yaml"
    cfg.write_text(
        'agents:\n  "*":\n    contracts:\n      - id: only_read\n        G:\n'
        "          pattern: tool_allowlist\n          args: [read_file]\n"
    )
    return trace, cfg


def _assert_inert(out: bytes) -> None:
    assert b"\x1b[" in out, "rich styling expected: the test must run with colours on"
    assert CLEAR.encode() not in out
    assert b"\x1b]8;;http://evil" not in out and b"\x1b]8" not in out
    assert b"\x1b[5m" not in out  # no blink from the planted [bold blink]
    text = out.decode("utf-8", errors="replace")
    assert "[red]" in text  # shown literally, not interpreted


def test_scan_table_in_a_pty(evil: tuple[Path, Path], tmp_path: Path) -> None:
    trace, cfg = evil
    out = _pty_run(["scan", str(trace), "-c", str(cfg)], tmp_path)
    _assert_inert(out)
    assert b"only_read" in out


def test_explain_in_a_pty(evil: tuple[Path, Path], tmp_path: Path) -> None:
    trace, cfg = evil
    from sponsio_audit.ingest import Store, ingest

    store = Store.open(None)
    ingest([str(trace)], store)
    row = store.con.execute("SELECT trace_id FROM events LIMIT 1").fetchone()
    assert row is not None
    out = _pty_run(["explain", str(trace), "-c", str(cfg), "--trace", row[0]], tmp_path)
    _assert_inert(out)
    assert b"blink]markup[/]" in out  # the args excerpt, literally (not interpreted)


def test_top_list_spreads_across_contracts_and_says_how_to_see_all(demo_db: Path) -> None:
    from rich.console import Console

    from sponsio_audit.ingest import Store
    from sponsio_audit.report import terminal
    from sponsio_audit.report.data import load
    from tests.report.conftest import planted

    store = Store.open(demo_db)
    try:
        data = load(store, timelines=False)
    finally:
        store.close()
    console = Console(width=200, record=True, no_color=True)
    terminal.render(data, console, 3)
    text = console.export_text()
    assert f"Top violations (3 of {len(planted())}; --limit 0 lists all)" in text
    table = text[text.index("Top violations") :].splitlines()
    rows = [line for line in table if line.startswith("│ high")]
    assert len(rows) == 3 and len({r.split("│")[2].strip() for r in rows}) == 3
