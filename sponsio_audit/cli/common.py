"""What every command shares: exit codes, option types, and errors as one ``error: …`` line.

A user mistake or a problem of the environment (a missing folder, a file
that is not a DuckDB store, a permission, a full disk) is never a
traceback: ``guarded`` turns it into one line on stderr naming the path,
and exit code 2. Only light modules are imported here, so that
``sponsio-audit --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import IO, Annotated, Any, NoReturn

import typer

from sponsio_audit.redact import inert

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_NO_INPUT = 4
EXIT_NO_TRACE = 5
EXIT_NO_CONTRACT = 6

EXIT_CODES_HELP = (
    "Exit codes: 0 no violation at or above --fail-on; 1 violations at or above it; "
    "2 usage or configuration error, or a path that cannot be used (not a folder, not a "
    "DuckDB store, no permission, disk full), or a worker process that died twice on the "
    "same traces; 3 input errors (skipped files or records) or contracts that apply to no "
    "trace, with --strict; 4 no input file; 5 no trace in the inputs; 6 no contract (4-6: "
    "unless --allow-empty); 130 interrupted, 143 terminated."
)


class Format(str, Enum):
    """Report formats."""

    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"
    junit = "junit"
    sarif = "sarif"


class ListFormat(str, Enum):
    """Formats of the listings (patterns, atoms, validate, traces, explain)."""

    table = "table"
    json = "json"


class FailOn(str, Enum):
    """Lowest severity that fails the run (``none``: never)."""

    none = "none"
    low = "low"
    medium = "medium"
    high = "high"


class GroupBy(str, Enum):
    """What makes one trace: the OTLP trace id or the conversation id."""

    trace = "trace"
    conversation = "conversation"


class Engine(str, Enum):
    """Where ``scan`` ingests and evaluates: this process (DuckDB) or Spark."""

    default = "default"
    spark = "spark"


class UsageProblem(Exception):
    """A problem to print on stderr (lines already formatted) and exit with ``code``."""

    def __init__(self, lines: list[str], code: int = EXIT_USAGE, *, prefix: bool = True) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines
        self.code = code
        self.prefix = prefix


def config_problem(lines: list[str]) -> UsageProblem:
    """Configuration errors: one ``FILE:LINE: yaml.path: message`` line each, exit 2."""
    return UsageProblem(lines, prefix=False)


def started() -> None:
    """A command's start-up is over: the objects it made (modules, configuration, contracts)
    are frozen out of the garbage collector, which ``main`` kept off until now and is on from
    here. Start-up makes hundreds of thousands of objects and no garbage worth a collection:
    the demo scan took 0.58 -> 0.55 s (median of 10 pairs; user CPU 0.52 -> 0.48 s), a fixed
    cost every command pays; no change measured on 200k spans (5 pairs)."""
    gc.freeze()
    gc.enable()


def say_error(line: str) -> None:
    """Print ``error: line`` on stderr (plain text: no markup, whatever the line holds; a
    path or name in it from the user or a trace cannot add lines or escape sequences)."""
    sys.stderr.write(f"error: {inert(line)}\n")
    sys.stderr.flush()


def say_warning(line: str) -> None:
    """Print ``warning: line`` on stderr (as inert as ``say_error``)."""
    sys.stderr.write(f"warning: {inert(line)}\n")
    sys.stderr.flush()


def fail(lines: list[str], code: int = EXIT_USAGE) -> NoReturn:
    """Print each line as an error and exit with ``code``."""
    for line in lines:
        say_error(line)
    raise typer.Exit(code)


def os_reason(e: OSError) -> str:
    """The reason of an OS error in words (``No space left on device``)."""
    if e.errno is not None and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


def check_inputs(paths: list[Path]) -> None:
    """Refuse trace paths that cannot be opened, each with its own reason (a symlink loop
    is not 'no such file'); ``-`` is standard input."""
    bad = []
    for p in paths:
        if str(p) == "-":
            continue
        try:
            os.stat(p)
        except OSError as e:
            if e.errno == errno.ENOENT:
                dangling = os.path.islink(p)
                why = (
                    "a symbolic link to a missing file" if dangling else "no such file or directory"
                )
            elif e.errno == errno.ELOOP:
                why = "a loop of symbolic links"
            else:  # the reasons every other OS error gets (``_os_line``)
                bad.append(_os_line(e))
                continue
            bad.append(f"{p}: {why}")
        except ValueError:  # a NUL byte in the path
            bad.append(f"{p}: not a valid path")
    if bad:
        raise UsageProblem(bad)


def _os_line(e: OSError) -> str:
    name = e.filename if e.filename is not None else None
    if name is None and e.errno == errno.ENOSPC:
        return f"no space left on device: {e}"
    reason = os_reason(e)
    if e.errno == errno.ENOTDIR:
        reason = "a part of this path is a file, not a folder"
    elif e.errno == errno.EISDIR:
        reason = "is a folder, not a file"
    return f"{name}: {reason}" if name is not None else reason


def _db_line(e: Exception, db: Path | None) -> str:
    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
    msg = msg.removeprefix("IO Error: ")
    where = f"{db}: " if db is not None else ""
    if "not a valid DuckDB database" in msg:
        return f"{where}not a DuckDB store (sponsio-audit writes one with `scan --db FILE`)"
    return f"{where}{msg}"


@contextmanager
def guarded(db: Path | None = None) -> Iterator[None]:
    """Turn usage problems, OS errors and DuckDB errors into one ``error:`` line and an exit code.

    ``db`` names the store file in messages about the store (DuckDB's own
    messages carry the path too, but not always).
    """
    try:
        yield
    except UsageProblem as e:
        if not e.prefix:
            for line in e.lines:
                sys.stderr.write(inert(line) + "\n")
            raise typer.Exit(e.code) from None
        fail(e.lines, e.code)
    except BrokenPipeError:  # stdout closed by the reader (`| head`): click exits quietly
        raise
    except OSError as e:
        fail([_os_line(e)])
    except Exception as e:
        if type(e).__module__.split(".")[0] in ("duckdb", "_duckdb"):
            fail([_db_line(e, db)])
        pool = sys.modules.get("sponsio_audit.ingest.workers")  # loaded if it raised
        if pool is not None and isinstance(e, pool.WorkerDied):
            fail([str(e)])
        raise


def prepare_output(path: Path) -> None:
    """Create the folders above ``path``; an error naming the path if that cannot be done."""
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        raise UsageProblem([f"{path}: {parent} is a file, not a folder"])
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageProblem([f"{path}: a part of this path is a file, not a folder"]) from None
    except NotADirectoryError:
        raise UsageProblem([f"{path}: a part of this path is a file, not a folder"]) from None
    if path.is_dir():
        raise UsageProblem([f"{path}: is a folder, not a file"])


def prepare_folder(path: Path) -> None:
    """Create the folder ``path`` (and its parents); an error naming it if it is a file."""
    if path.exists() and not path.is_dir():
        raise UsageProblem([f"{path}: is a file, a folder is needed here"])
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UsageProblem([f"{path}: a part of this path is a file, not a folder"]) from None


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Name ``path`` in any OS error raised while writing it (a full disk names no file)."""
    try:
        yield
    except OSError as e:
        raise UsageProblem([f"{path}: cannot write: {os_reason(e)}"]) from None


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (folders created; a full disk or a permission: an error line)."""
    prepare_output(path)
    with writing(path), replaced(path, "w") as f:
        f.write(text)


@contextmanager
def replaced(path: Path, mode: str) -> Iterator[IO[Any]]:
    """``path`` opened for writing (``mode`` "w", UTF-8, or "wb") through a file beside it that
    is renamed over ``path`` when the block ends without error, and removed otherwise: an
    output cut short (Ctrl-C, a full disk) leaves no truncated report where a whole one is
    expected. The new file keeps the old one's permissions (else a plain open's). Written in
    place: a path that is not a regular file (``/dev/stdout``, a pipe), a symbolic link (its
    target is the output), or one beside which no file can be made (a folder not writable)."""
    encoding = None if "b" in mode else "utf-8"
    part = None
    if not path.is_symlink() and (path.is_file() or not path.exists()):
        with contextlib.suppress(OSError):
            fd, part = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    if part is None:
        with open(path, mode, encoding=encoding) as f:
            yield f
        return
    try:
        if path.exists():
            bits = path.stat().st_mode & 0o7777
        else:  # what a plain open() gives (mkstemp makes it 0600)
            mask = os.umask(0)
            os.umask(mask)
            bits = 0o666 & ~mask
        os.chmod(part, bits)
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
        os.replace(part, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise


ContractsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--contracts",
        "-c",
        help="sponsio.yaml file(s); default: those in $SPONSIO_AUDIT_CONTRACTS (several "
        "separated by spaces), else found from the current folder upwards.",
    ),
]
PackOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--pack", help="Shipped pack(s); 'default' when neither this nor a file is found."
    ),
]
GroupByOpt = Annotated[GroupBy, typer.Option("--group-by", help="What one trace is.")]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="Only this agent's contracts.")]
MAX_JOBS = 256
"""The most ``--jobs`` accepted (more is a usage error: each worker is a process that
imports the engine, about 100 MB, whatever the input's size)."""

JobsOpt = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        min=0,
        max=MAX_JOBS,
        help="Processes reading traces; 0 (default): one per CPU for inputs of 64 MB or more. "
        "The result is the same.",
    ),
]
ListFormatOpt = Annotated[
    ListFormat, typer.Option("--format", "-f", help="table, or json for scripts.")
]
IngestLimitOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--ingest-limit",
        metavar="NAME=VALUE",
        help="Set an ingest limit (repeatable; sponsio-audit limits lists them); over "
        "$SPONSIO_AUDIT_INGEST_LIMITS (NAME=VALUE,...) and sponsio.yaml 'limits:'.",
    ),
]


def limits_in_force(config_settings: list[tuple[str, Any, str]], flags: list[str]) -> Any:
    """The ingest ``Limits`` of a run: defaults, then the configuration's ``limits:``, then
    ``$SPONSIO_AUDIT_INGEST_LIMITS``, then ``--ingest-limit`` (a bad one: a usage error)."""
    import os

    from sponsio_audit.ingest import limits

    try:
        settings = [
            *config_settings,
            *limits.env_settings(os.environ.get(limits.ENV)),
            *(limits.parse_pair(f, "--ingest-limit") for f in flags),
        ]
    except limits.LimitError as e:
        raise UsageProblem([str(e)]) from None
    return checked_limits(settings)


def checked_limits(settings: list[tuple[str, Any, str]]) -> Any:
    """The default ``Limits`` with ``(name, value, where)`` settings applied; a bad name or
    value is a usage error naming where it was set. ``scan`` and ``validate`` both check a
    configuration's ``limits:`` here, so they accept and reject the same files."""
    from sponsio_audit.ingest import limits

    try:
        return limits.DEFAULT.with_settings(settings)
    except limits.LimitError as e:
        raise UsageProblem([str(e)]) from None


def own_pyarrow(spark: bool = False) -> None:
    """Set pyarrow up for this command (``arrow_setup``): the package's memory pool as the
    default; and, in a process that is the command's own (``sponsio-audit``, ``python -m
    sponsio_audit``; not a program that calls the app, such as a test runner) where Spark's
    driver does not run (pyspark hands pyarrow pandas objects), no pandas import for
    pyarrow's look. Called before the report modules load.

    In the command's own process also one OpenBLAS thread (``OPENBLAS_NUM_THREADS``, unless
    set), read when numpy loads here and in the ingest workers, which inherit it: nothing
    here multiplies matrices, and NumPy's OpenBLAS otherwise starts a thread per core
    that spins for a while after start-up (0.12 s of the CPU of a scan of 3,000 spans on
    2 cores, in every worker too)."""
    own = _own_process()
    if own:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from sponsio_audit.arrow_setup import own_process, skip_pandas

    own_process()
    if not spark and own:
        skip_pandas()


def _own_process() -> bool:
    """Whether this process runs the command line itself (its entry point is ours)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return str(spec.name).startswith("sponsio_audit")
    return Path(sys.argv[0]).name in ("sponsio-audit", "sponsio-audit.exe")
