"""Run the CLI in a fresh process and take that process's own peak RSS.

``ru_maxrss`` from ``wait4`` keeps the high-water mark of the process the child was
forked from (the test run, hundreds of MB after some tests), so the child reads its
own ``VmHWM`` at exit and writes it to a file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

_LAUNCH = """
import atexit, os, runpy, sys

def _peak():  # this process's own high-water mark since exec (VmHWM, KiB)
    with open("/proc/self/status") as f:
        kib = next(int(x.split()[1]) for x in f if x.startswith("VmHWM:"))
    with open(os.environ["SPONSIO_TEST_PEAK"], "w") as out:
        out.write(str(kib))

atexit.register(_peak)
sys.argv = ["sponsio-audit", *sys.argv[1:]]
runpy.run_module("sponsio_audit.cli", run_name="__main__")
"""


def run_cli(
    args: list[str], peak_file: Path, stdout: IO[Any] | int, stderr: IO[Any] | int, **kw: Any
) -> tuple[int, int]:
    """``sponsio-audit ARGS`` in a fresh process: (exit code, its peak RSS in bytes)."""
    env = {**os.environ, "SPONSIO_TEST_PEAK": str(peak_file)}
    proc = subprocess.run(
        [sys.executable, "-c", _LAUNCH, *args],
        stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, env=env, timeout=600, **kw,
    )  # fmt: skip
    return proc.returncode, int(peak_file.read_text()) * 1024
