"""Hostile-input benchmark: the issue's full-size inputs through the CLI, with time and peak RSS.

``python bench/hostile.py [--only gzip_bomb,zstd_bomb,...] [--keep]``

Each input is written into its own folder beside a good file and scanned by
``sponsio-audit scan --strict --fail-on none -f json`` in a subprocess; the
wall and CPU time, the subprocess's peak RSS (``wait4``'s ``ru_maxrss``), the
store file's size, the exit code, the load average and the first skip reason
are printed. The inputs (issue 13):

- ``gzip_bomb``: 2.3 MB of gzip holding ~2.3 GB of zeros after a good line;
- ``zstd_bomb``: ~128 KB of zstd holding 4 GiB of zeros after a good line;
- ``giant_line``: a 1 GiB line (sparse file) between two good lines;
- ``fifo``: a FIFO and a link to /dev/zero in the folder (hung the scan before);
- ``transcript_6000``: 6 000 messages, every other one the assistant's (3.4 GB peak
  RSS before shared prompts, 0.23 GB after);
- ``coding_transcript``: a 2.7 MB coding-agent transcript (1 000 tool turns),
  whose prompts were quadratic in its size (before shared prompts: 5.5 GB peak RSS,
  a 708 MB store, 54 s CPU; after: 0.24 GB, 7.6 MB, 2.3 s);
- ``long_transcript``: ~11 MB at the 20 000-message limit (its prompts would add up
  to ~55 GB; after shared prompts: 0.4 GB peak RSS, an 18 MB store, 4 s CPU);
- ``wide_trace``: one trace of 200 000 spans (1.1 GB and 15 s before);
- ``many_traces``: 100 000 one-span traces with the default pack (3.1 GB before).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import string
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import zstandard

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.hostile.inputs import _good  # noqa: E402
from tests.hostile.otlp import line, ok_line, request, sid, sparse, tid, tool_span  # noqa: E402
from tests.hostile.otlp import wide_trace as write_wide_trace  # noqa: E402


def gzip_bomb(d: Path) -> None:
    """~2.3 GB of zeros, gzip level 9, streamed."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * (1 << 20)
    with (d / "bomb.jsonl.gz").open("wb") as f:
        f.write(c.compress(ok_line(1)))
        for _ in range(2300):
            f.write(c.compress(zeros))
        f.write(c.flush())


def zstd_bomb(d: Path) -> None:
    """4 GiB of zeros, zstd level 19, streamed."""
    zeros = b"\0" * (1 << 22)
    with (d / "bomb.jsonl.zst").open("wb") as f:
        w = zstandard.ZstdCompressor(level=19).stream_writer(f)
        w.write(ok_line(1))
        for _ in range(1024):
            w.write(zeros)
        w.flush(zstandard.FLUSH_FRAME)


def giant_line(d: Path) -> None:
    """A 1 GiB line between two good ones."""
    sparse(d / "giant.jsonl", ok_line(1) + b'{"x": "', 1 << 30, b'"}\n' + ok_line(3))


def fifo(d: Path) -> None:
    """A FIFO and a symlink to /dev/zero."""
    os.mkfifo(d / "pipe.jsonl")
    (d / "zero.jsonl").symlink_to("/dev/zero")


def transcript_6000(d: Path) -> None:
    """6 000 messages, user and assistant in turn."""
    msgs = [
        {"role": "assistant" if i % 2 else "user", "content": f"message {i} " + "x" * 40}
        for i in range(6000)
    ]
    (d / "chat.json").write_text(json.dumps(msgs))


def coding_transcript(d: Path) -> None:
    """~2.7 MB: 1 000 turns of an assistant tool call and a 2.5 KB tool result (seeded random
    letters: text that compresses like real output, not a run of one letter)."""
    rng = random.Random(13)
    letters = string.ascii_letters + string.digits + "     \n"
    msgs: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing tests."},
    ]
    for i in range(1000):
        call = {"id": f"c{i}", "function": {"name": "bash", "arguments": '{"command": "pytest"}'}}
        msgs.append({"role": "assistant", "content": f"step {i}", "tool_calls": [call]})
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": f"{i} " + "".join(rng.choices(letters, k=2500)),
            }
        )
    (d / "coding.json").write_text(json.dumps(msgs))


def long_transcript(d: Path) -> None:
    """~11 MB at the message limit: 19 999 messages of 500 seeded random letters, user and
    assistant in turn (its requests' prompts would add up to ~55 GB if each were stored)."""
    rng = random.Random(7)
    letters = string.ascii_letters + "     \n"
    msgs = [
        {
            "role": "assistant" if i % 2 else "user",
            "content": f"{i} " + "".join(rng.choices(letters, k=500)),
        }
        for i in range(19_999)
    ]
    (d / "long.json").write_text(json.dumps(msgs))


def wide_trace(d: Path) -> None:
    """One trace of 200 000 tool spans, 1 000 spans per request line."""
    write_wide_trace(d / "wide.jsonl", 200)


def many_traces(d: Path) -> None:
    """100 000 one-span traces, 1 000 per request line."""
    with (d / "many.jsonl").open("wb") as f:
        for r in range(100):
            spans = [
                tool_span(tid(r * 1000 + i + 1), sid(1), "read_file", {"path": "/tmp/a"})
                for i in range(1000)
            ]
            f.write(line(request(*spans)))


INPUTS: dict[str, Callable[[Path], None]] = {
    f.__name__: f
    for f in (
        gzip_bomb,
        zstd_bomb,
        giant_line,
        fifo,
        transcript_6000,
        coding_transcript,
        long_transcript,
        wide_trace,
        many_traces,
    )
}


def run(name: str, root: Path) -> None:
    """Build one input, scan it in a subprocess, print its figures."""
    d = root / name / "traces"
    d.mkdir(parents=True)
    _good(d)
    INPUTS[name](d)
    size = sum(p.stat().st_size for p in d.iterdir() if p.is_file() and not p.is_symlink())
    out = root / name / "report.json"
    cmd = [sys.executable, "-m", "sponsio_audit.cli", "scan", str(d), "-f", "json", "-o", str(out)]
    cmd += ["--strict", "--fail-on", "none", "--jobs", "1", "--db", str(root / name / "a.duckdb")]
    t = time.perf_counter()
    with (root / name / "stderr").open("wb") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    first = ""
    if out.exists():
        doc = json.loads(out.read_text("utf-8"))
        sk = doc["inputs"]["skipped"]
        first = f"{len(sk)} skipped" + (f"; {sk[0]['reason'][:90]}" if sk else "")
        first = f"events {doc['summary']['events']}; {first}"
    else:
        first = (root / name / "stderr").read_text("utf-8", "replace").strip()[-200:]
    db = root / name / "a.duckdb"
    stored = db.stat().st_size / 1e6 if db.exists() else 0.0
    cpu = usage.ru_utime + usage.ru_stime
    print(
        f"{name:18s} input {size / 1e6:9.1f} MB  wall {wall:6.1f} s  cpu {cpu:6.1f} s  "
        f"peak RSS {usage.ru_maxrss / 1024:7.0f} MB  store {stored:8.1f} MB  exit {code}  "
        f"load {os.getloadavg()[0]:.1f}  {first}",
        flush=True,
    )


def main() -> None:
    """Run the chosen inputs (all by default) in a temporary folder."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(INPUTS), help="comma-separated input names")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sponsio-hostile-"))
    try:
        for name in args.only.split(","):
            run(name, root)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
