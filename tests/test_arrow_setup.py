"""pyarrow's set-up (``arrow_setup``): the memory pool, and the command's own process.

Each case runs in a fresh interpreter: pyarrow reads ``ARROW_DEFAULT_MEMORY_POOL``
once, when it is first imported, and looks for pandas once, on its first array.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from sponsio_audit.cli import app

REPO = Path(__file__).resolve().parents[1]

PROBE = (
    "import pyarrow as pa; from sponsio_audit.arrow_setup import POOL, own_process; "
    "a = POOL.backend_name; own_process(); print(a, pa.default_memory_pool().backend_name)"
)


def _backends(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


@pytest.mark.parametrize("chosen", ["system", "mimalloc"])
def test_a_pool_the_user_chose_is_used(chosen: str) -> None:
    # ARROW_DEFAULT_MEMORY_POOL is pyarrow's own setting: a command must not override it
    assert _backends(ARROW_DEFAULT_MEMORY_POOL=chosen) == [chosen, chosen]


def test_jemalloc_by_default_and_for_the_whole_command() -> None:
    expected = "jemalloc" if _has_jemalloc() else pa.default_memory_pool().backend_name
    assert _backends() == [expected, expected]


def test_the_scan_command_does_not_import_pandas(tmp_path: Path) -> None:
    # pyarrow's look for pandas cost the command 0.2-0.3 s of start-up; skipping it must
    # not change what the command writes (the same report as the in-process scan's)
    pytest.importorskip("pandas")  # with no pandas installed there is nothing to skip
    probe = (
        "import runpy, sys; sys.argv = ['sponsio-audit', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('sponsio_audit', run_name='__main__')\n"
        "finally:\n    print('pandas' in sys.modules, file=sys.stderr)"
    )
    demo = REPO / "fixtures" / "demo"
    out = tmp_path / "r.json"
    args = [str(demo / "traces"), "--contracts", str(demo / "sponsio.yaml"), "--pack", "default"]
    done = subprocess.run(
        [sys.executable, "-c", probe, "scan", *args, "-f", "json", "-o", str(out), "-q"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr  # the demo has violations
    assert done.stderr.strip().splitlines()[-1] == "False"
    mine = json.loads(out.read_text(encoding="utf-8"))["summary"]
    here = CliRunner().invoke(app, ["scan", *args, "-f", "json", "-o", str(tmp_path / "h.json")])
    assert here.exit_code == 1
    assert json.loads((tmp_path / "h.json").read_text(encoding="utf-8"))["summary"] == mine
