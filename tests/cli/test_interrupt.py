"""Ctrl-C (or SIGTERM) during ``scan --jobs 2``: exit 130 (143), nothing half-written, nothing
left running.

A real ``scan`` is interrupted while its worker processes decode: by a terminal's
Ctrl-C (SIGINT to every process of the command) and by ``kill -INT`` of the scan
alone (what a CI runner or a supervisor may send). The second once aborted the
interpreter (a C++ ``terminate``, exit -6) in 2 runs of 3: the scan's thread was
still inside DuckDB when the interpreter ended. A report cut short must not be
left where a whole one is expected, and neither the workers nor their spool in
``/dev/shm`` may outlive the command.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sponsio_audit.cli.common import replaced

REPO = Path(__file__).resolve().parents[2]
LINE = (REPO / "fixtures" / "otel" / "genai.jsonl").read_bytes().splitlines()[0]
TRACE = b"0000000000000abc0000000000000001"


def _corpus(path: Path, n: int) -> None:
    assert LINE.count(TRACE) == 6  # six spans of one trace per line: n distinct traces
    with path.open("wb") as f:
        for i in range(1, n + 1):
            f.write(LINE.replace(TRACE, f"{i:032x}".encode()) + b"\n")


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(c) for c in f.read().split()]
                out += kids
                todo += kids
        except OSError:
            continue
    return out


@pytest.mark.skipif(sys.platform != "linux", reason="/proc and forkserver workers: Linux here")
@pytest.mark.parametrize(
    ("whom", "code"),
    [("the scan alone", 130), ("every process (a terminal)", 130), ("SIGTERM to the scan", 143)],
)
def test_ctrl_c_during_a_parallel_scan_ends_it_cleanly(
    tmp_path: Path, whom: str, code: int
) -> None:
    corpus = tmp_path / "spans.jsonl"
    _corpus(corpus, 12_000)  # 72k spans: several seconds of decoding on 2 workers
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "sponsio_audit", "scan", str(corpus), "--pack", "default"]
    cmd += ["-o", str(report), "--jobs", "2", "-q"]
    p = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the workers can be found and signalled
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        cwd=tmp_path,
    )
    deadline = time.monotonic() + 60
    while len(_descendants(p.pid)) < 3 and p.poll() is None:  # forkserver, its 2 workers
        assert time.monotonic() < deadline, "the scan started no workers"
        time.sleep(0.01)
    assert p.poll() is None, "the scan ended before it could be interrupted"
    time.sleep(0.3)  # decoding now
    if whom == "the scan alone":
        p.send_signal(signal.SIGINT)
    elif whom == "SIGTERM to the scan":  # a cancelled CI job, ``timeout``, a stopped container
        p.send_signal(signal.SIGTERM)
    else:
        os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    text = err.decode(errors="replace")
    assert p.returncode == code, (p.returncode, text[-2000:])
    for crash in ("Traceback", "terminate called", "FATAL", "Aborted"):
        assert crash not in text, text[-2000:]
    assert not report.exists() and not list(tmp_path.glob(".report.json.*"))
    deadline = time.monotonic() + 10
    while True:  # the forkserver and workers end once the scan's end closed their sockets
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "processes of the scan outlived it"
        time.sleep(0.05)
    if os.path.isdir("/dev/shm"):
        assert not [n for n in os.listdir("/dev/shm") if n.startswith(f"sponsio-audit-{p.pid}-")]


def test_an_output_cut_short_leaves_the_old_file_and_no_part(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    out.write_text("the last whole report")
    with pytest.raises(KeyboardInterrupt), replaced(out, "w") as f:
        f.write("the start of a new one")
        raise KeyboardInterrupt
    assert out.read_text() == "the last whole report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
    with replaced(out, "wb") as f:
        f.write(b"a whole new one")
    assert out.read_bytes() == b"a whole new one"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


@pytest.mark.skipif(os.name != "posix", reason="umask and /dev/null: POSIX")
def test_a_replaced_output_gets_the_permissions_a_plain_write_gives(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        plain = tmp_path / "plain"
        plain.write_text("x")
        with replaced(tmp_path / "new", "w") as f:
            f.write("x")
        assert (tmp_path / "new").stat().st_mode & 0o777 == plain.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(mask)
    with replaced(Path("/dev/null"), "w") as f:  # not a regular file: written in place
        f.write("x")
    assert Path("/dev/null").exists() and not Path("/dev/null").is_file()


@pytest.mark.skipif(os.name != "posix", reason="file modes and symbolic links: POSIX")
def test_a_replaced_output_keeps_its_mode_and_a_link_keeps_pointing(tmp_path: Path) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o640)
    with replaced(kept, "w") as f:
        f.write("new")
    assert kept.read_text() == "new" and kept.stat().st_mode & 0o777 == 0o640
    target = tmp_path / "reports" / "latest.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    with replaced(link, "w") as f:
        f.write("new")
    assert link.is_symlink() and target.read_text() == "new"


def _report(db: Path) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "sponsio_audit", "report", "--db", str(db), "-f", "json"],
        capture_output=True,
    )
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    return run.stdout.decode()


@pytest.mark.skipif(sys.platform != "linux", reason="/proc and forkserver workers: Linux here")
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_replacing_scan_interrupted_keeps_the_stored_audit(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    """``scan --db FILE`` over a stored audit, interrupted while it reads its traces: the
    scan had dropped the stored audit before it began, so Ctrl-C left no audit at all
    (``report`` refused the store as unfinished). ``FILE`` is now the old audit,
    unchanged, and the new store being built beside it is gone."""
    db = tmp_path / "audit.duckdb"
    support = REPO / "fixtures" / "demo" / "traces" / "support_bot.otlp.jsonl"
    config = REPO / "fixtures" / "demo" / "sponsio.yaml"
    first = [sys.executable, "-m", "sponsio_audit", "scan", str(support), "-c", str(config)]
    assert subprocess.run([*first, "--db", str(db), "-q"], capture_output=True).returncode == 1
    before = _report(db)
    corpus = tmp_path / "spans.jsonl"
    _corpus(corpus, 12_000)
    # reading its traces once its workers are up
    p = _scan_started(corpus, ["--db", str(db)], tmp_path, children=3)
    assert p.poll() is None, "the scan ended before it could be interrupted"
    time.sleep(0.3)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    text = err.decode(errors="replace")
    assert p.returncode == code, (p.returncode, text[-2000:])
    assert "Traceback" not in text, text[-2000:]
    assert sorted(os.listdir(tmp_path)) == ["audit.duckdb", "spans.jsonl"]
    assert _report(db) == before


def _masked(pid: int) -> bool:
    """Whether SIGINT is blocked or ignored in process ``pid``."""
    fields = dict(
        line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    bit = 1 << (signal.SIGINT - 1)
    return bool((int(fields["SigBlk"], 16) | int(fields["SigIgn"], 16)) & bit)


def _exec_of(pids: list[int], name: bytes, wait: float = 5.0) -> int | None:
    """The process of ``pids`` whose command line holds ``name``, once it has one: a child
    just forked shows its parent's command line until its exec is done (a busy machine)."""
    end = time.monotonic() + wait
    while True:
        for pid in pids:
            if name in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
        if time.monotonic() > end:
            return None
        time.sleep(0.001)


_START = """
import os, sys
from sponsio_audit.ingest import workers
workers.prestart(2)  # the forkserver starts: report SIGINT's state in it at once
print(*[c for t in os.listdir(f"/proc/{os.getpid()}/task")
        for c in open(f"/proc/{os.getpid()}/task/{t}/children").read().split()], flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(sys.platform != "linux", reason="/proc and forkserver workers: Linux here")
def test_the_forkserver_is_deaf_to_ctrl_c_from_its_start() -> None:
    """A terminal's Ctrl-C reaches every process of the command. The forkserver ignored
    SIGINT only after importing ingest's modules (0.3-0.4 s), and a Ctrl-C in that while
    printed its KeyboardInterrupt traceback under the scan's exit 130. It now starts with
    SIGINT blocked (a mask is kept through exec), as the workers forked from it do."""
    p = subprocess.Popen(
        [sys.executable, "-c", _START], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert p.stdout is not None
        kids = [int(c) for c in p.stdout.readline().split()]
        forkserver = _exec_of(kids, b"forkserver")
        assert forkserver is not None, kids
        assert _masked(forkserver)  # still importing: it has not set SIG_IGN itself yet
    finally:
        p.communicate("", timeout=30)


@pytest.mark.skipif(sys.platform != "linux", reason="/proc and forkserver workers: Linux here")
@pytest.mark.parametrize("delay", [0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2])
def test_ctrl_c_while_the_workers_start_prints_no_traceback(tmp_path: Path, delay: float) -> None:
    """Ctrl-C to every process of ``scan --jobs 2`` just after the workers' forkserver was
    started (it imports ingest's modules for 0.3-0.4 s): exit 130 and no traceback."""
    corpus = tmp_path / "spans.jsonl"
    _corpus(corpus, 40_000)  # about 4 s: still running at the last delay
    p = _scan_started(corpus, [], tmp_path, children=2)  # resource tracker, forkserver
    time.sleep(delay)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    text = err.decode(errors="replace")
    assert "Traceback" not in text, text[-3000:]
    assert p.returncode == 130, (p.returncode, text[-2000:])


_EXEC_HOOK = """
from sponsio_audit import api
def evaluate(*args, **kw):
    exec("raise KeyboardInterrupt")  # Ctrl-C landing in exec'd code (a dataclass's methods)
api.evaluate = evaluate
from sponsio_audit.cli import main
if __name__ == "__main__":
    main()
"""


def test_an_interrupt_out_of_exec_code_still_exits_130(tmp_path: Path) -> None:
    """A KeyboardInterrupt that left code run by ``exec`` of a string (a dataclass's methods,
    made while the scan's thread imports modules) and was handled by the command: CPython
    kept a record of it, and ``python -m sponsio_audit`` then ended by SIGINT (-2, no
    message) instead of exit 130."""
    (tmp_path / "hooked_scan.py").write_text(_EXEC_HOOK)
    demo = REPO / "fixtures" / "demo"
    cmd = [sys.executable, "-m", "hooked_scan", "scan", str(demo / "traces"), "-c"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    run = subprocess.run([*cmd, str(demo / "sponsio.yaml"), "-q"], capture_output=True, env=env)
    assert run.returncode == 130, run.stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in run.stderr


def _scan_started(
    corpus: Path, extra: list[str], cwd: Path, children: int
) -> subprocess.Popen[bytes]:
    """``scan CORPUS --jobs 2`` in its own process group (SIGINT as a terminal sends it),
    returned once it has ``children`` descendant processes."""
    cmd = [sys.executable, "-m", "sponsio_audit", "scan", str(corpus), "--pack", "default"]
    p = subprocess.Popen(
        [*cmd, *extra, "--jobs", "2", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        cwd=cwd,
    )
    deadline = time.monotonic() + 60
    while len(_descendants(p.pid)) < children and p.poll() is None:
        assert time.monotonic() < deadline, f"the scan started fewer than {children} processes"
        time.sleep(0.002)
    return p


_LATE_HOOK = """
import os, signal, time
from sponsio_audit.cli import main
if __name__ == "__main__":
    try:
        main()
    finally:  # Ctrl-C once the command has decided its exit code, as the process ends
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
"""


def test_a_ctrl_c_as_the_process_ends_keeps_the_exit_code(tmp_path: Path) -> None:
    """A Ctrl-C that reaches a scan just as it finishes (the process group's Ctrl-C, 1.2 s
    into a short scan in CI) ended it by SIGINT, -2 with no message, after the command had
    decided its exit code; now the code stands."""
    hook = tmp_path / "late.py"
    hook.write_text(_LATE_HOOK, encoding="utf-8")
    support = REPO / "fixtures" / "demo" / "traces" / "support_bot.otlp.jsonl"
    config = REPO / "fixtures" / "demo" / "sponsio.yaml"
    cmd = [sys.executable, str(hook), "scan", str(support), "-c", str(config), "-q"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert (res.returncode, "Traceback" in res.stderr) == (1, False), res.stderr[-2000:]


_PROBE = """
import sys, threading
from sponsio_audit import recursion

class Probe:  # reports whether DuckDB's import starts inside ``recursion.shielded``
    def find_spec(self, name, path=None, target=None):
        if name == "duckdb":
            inside = threading.get_ident() in recursion._shielded
            print("shielded" if inside else "bare", flush=True)
            sys.meta_path.remove(self)
        return None

sys.meta_path.insert(0, Probe())
sys.argv = ["sponsio-audit", *sys.argv[1:]]
from sponsio_audit.cli import main
main()
"""


@pytest.fixture(scope="module")
def stored_audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A stored audit of the demo (``scan --db``) and one trace id in it."""
    import duckdb

    db = tmp_path_factory.mktemp("stored") / "audit.duckdb"
    subprocess.run(
        [sys.executable, "-m", "sponsio_audit", "scan", str(REPO / "fixtures" / "demo" / "traces"),
         "--pack", "default", "--fail-on", "none", "-q", "--db", str(db)],
        check=True, capture_output=True, timeout=120, cwd=db.parent,
    )  # fmt: skip
    with duckdb.connect(str(db), read_only=True) as con:
        (trace,) = con.sql("SELECT min(trace_id) FROM violations").fetchall()[0]
    return db, str(trace)


@pytest.mark.parametrize("command", ["scan", "report", "explain", "traces"])
def test_commands_import_duckdb_where_ctrl_c_cannot_break_in(
    tmp_path: Path, stored_audit: tuple[Path, str], command: str
) -> None:
    """DuckDB's import makes its enum classes by running Python from C++: a Ctrl-C raised in
    the scan's thread there aborted the process ("Critical nanobind error", exit -6; 3 of 120
    Ctrl-Cs at random times of the import, 0 of 120 shielded). Every command that reads a
    store imports it shielded (``report``, ``explain`` and ``traces`` imported it bare, in
    the main thread or the command's own)."""
    db, trace = stored_audit
    args = {
        "scan": [str(REPO / "fixtures" / "demo" / "traces"), "--pack", "default",
                 "--fail-on", "none", "-q"],
        "report": ["--db", str(db), "-q"],
        "explain": ["--db", str(db), "--trace", trace],
        "traces": ["--db", str(db)],
    }[command]  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, command, *args],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "shielded"


_CTRL_C_IN_IMPORT = """
import runpy, sys

class CtrlC:  # a Ctrl-C that lands while the command line's modules load (typer's import)
    def find_spec(self, name, path=None, target=None):
        if name == "typer":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, CtrlC())
sys.argv = ["sponsio-audit", "--help"]
runpy.run_module("sponsio_audit", run_name="__main__")
"""


def test_ctrl_c_while_the_command_line_loads_exits_130_quietly(tmp_path: Path) -> None:
    """Before the command runs, loading typer and every command takes ~0.1 s: a Ctrl-C there
    printed Python's traceback of the import. Now exit 130 and nothing, as during a command;
    the installed script goes through the same entry."""
    out = subprocess.run(
        [sys.executable, "-c", _CTRL_C_IN_IMPORT], capture_output=True, text=True, cwd=tmp_path
    )
    assert (out.returncode, out.stderr, out.stdout) == (130, "", "")
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "sponsio-audit"]
    assert script.value == "sponsio_audit.entry:main"
