"""The ``sponsio-audit`` command line: one module per command, registered on one typer app.

Commands parse options, call the library and render; they import the
heavy parts (pyarrow, duckdb, numpy) inside their functions, so that
``sponsio-audit --help`` does not pay for them. Exit codes and errors:
``common``.
"""

from __future__ import annotations

import functools
import gc
import signal
import threading
from collections.abc import Callable
from typing import Annotated, Any

import typer

from sponsio_audit.cli.atoms import atoms
from sponsio_audit.cli.conventions import conventions
from sponsio_audit.cli.explain import explain
from sponsio_audit.cli.init import init
from sponsio_audit.cli.limits import limits
from sponsio_audit.cli.patterns import patterns
from sponsio_audit.cli.report import report
from sponsio_audit.cli.scan import scan
from sponsio_audit.cli.traces import traces
from sponsio_audit.cli.validate import validate

app = typer.Typer(
    name="sponsio-audit",
    help="Audit what LLM agents did against temporal-logic contracts.\n\n"
    "Example: sponsio-audit scan traces/ --contracts sponsio.yaml --fail-on medium",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("sponsio-audit")
        except PackageNotFoundError:  # run from a source tree that is not installed
            v = "unknown"
        typer.echo(f"sponsio-audit {v}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Audit what LLM agents did against temporal-logic contracts."""


def _deep(fn: Callable[..., None]) -> Callable[..., None]:
    """A command run with room for deep formulas (``recursion.deep``); past it, exit 2."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        from sponsio_audit.cli.common import EXIT_USAGE
        from sponsio_audit.recursion import TooDeep, deep

        try:
            deep(fn, *args, **kwargs)
        except TooDeep as e:
            typer.echo(f"error: <config>: {e}", err=True)
            raise typer.Exit(EXIT_USAGE) from None

    return run


def _duckdb_first(fn: Callable[..., None]) -> Callable[..., None]:
    """A command that reads a store: DuckDB imported first, inside ``recursion.shielded`` (run
    under ``_deep``, whose thread a Ctrl-C reaches only where the shield ends). Its import
    makes enum classes by running Python from C++; a Ctrl-C raised there aborted the process
    ("Critical nanobind error", exit -6). ``scan`` imports it so itself, after its Arrow set-up."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        from sponsio_audit.recursion import shielded

        with shielded():
            import duckdb  # noqa: F401
        fn(*args, **kwargs)

    return run


def _collected(fn: Callable[..., None]) -> Callable[..., None]:
    """A command whose start-up ends as it starts (``common.started``): all but ``scan``,
    which ends its own after its heavy imports and configuration."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        from sponsio_audit.cli.common import started

        started()
        fn(*args, **kwargs)

    return run


for command in (
    scan,
    report,
    explain,
    traces,
    validate,
    patterns,
    atoms,
    conventions,
    limits,
    init,
):
    run = command if command is scan else _collected(command)
    if command in (report, explain, traces):
        run = _duckdb_first(run)
    app.command()(_deep(run) if command in (scan, report, explain, traces, validate) else run)


class Terminated(BaseException):
    """SIGTERM (a CI job cancelled, ``timeout``, a container stopped), raised where Ctrl-C's
    ``KeyboardInterrupt`` would be: the command unwinds the same way (``recursion.deep``
    raises it in the scan's thread too), then exits 143."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated


def _forget_stray_interrupt() -> None:
    """Clear CPython's record of a ``KeyboardInterrupt`` that left code run by ``exec`` of a
    string (a dataclass's methods, made as a module is imported), which the command then
    handled: ``python -m`` took it for an interrupt nothing caught and ended the process by
    SIGINT (exit -2, no message) instead of the command's exit 130, when Ctrl-C reached the
    scan's thread while it imported modules. The record is set or cleared by each ``exec``
    of a string; an interrupt that does leave the command sets it again after this."""
    exec("")


def main() -> None:
    """Entry point of ``sponsio-audit`` and ``python -m sponsio_audit``.

    When the command is done the process ends, so its objects are frozen out of the
    garbage collector (``gc.freeze``): the collections of the interpreter's shutdown then
    skip them, while files, stores and ``atexit`` handlers are closed and run as before
    (a scan of 3,000 spans: 0.785 -> 0.675 s median, 10 pairs). The collector is off during
    start-up (imports, configuration), until ``common.started``. SIGTERM ends it as Ctrl-C
    does (``Terminated``: the store rolled back, the workers stopped, no report half-written).
    """
    gc.disable()
    if threading.current_thread() is threading.main_thread():  # signals are the main thread's
        signal.signal(signal.SIGTERM, _terminate)
    try:
        app(prog_name="sponsio-audit")
    except Terminated:
        raise SystemExit(128 + signal.SIGTERM) from None
    finally:
        gc.freeze()
        _forget_stray_interrupt()
        if threading.current_thread() is threading.main_thread():
            # the command is done and its exit code decided: a Ctrl-C while the process
            # ends (it reaches a scan that is just finishing) must not turn it into -2
            signal.signal(signal.SIGINT, signal.SIG_IGN)


__all__ = ["app", "main"]
