"""Where a report goes: stdout and each ``-o FILE``, in the format its extension names.

``-f`` wins; without it each ``-o`` file takes the format of its
extension (``.sarif``, ``.json``, ``.html``, ``.md``, ``.xml``, ``.txt``),
and stdout takes ``$SPONSIO_AUDIT_FORMAT`` or ``table``. Folders above an
output file are created.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sponsio_audit.cli.common import UsageProblem, prepare_output, replaced, writing

ENV_FORMAT = "SPONSIO_AUDIT_FORMAT"
FORMATS = ("table", "json", "markdown", "html", "junit", "sarif")
EXTENSIONS = {
    ".json": "json",
    ".sarif": "sarif",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".xml": "junit",
    ".txt": "table",
}
FILE_WIDTH = 140  # a table written to a file is laid out at this width


@dataclass(frozen=True)
class Target:
    """One destination of the report: a file (or stdout when ``path`` is None) and its format."""

    path: Path | None
    fmt: str


def env_format() -> str | None:
    """``$SPONSIO_AUDIT_FORMAT`` when set (an error naming it when it is no format)."""
    value = os.environ.get(ENV_FORMAT, "").strip()
    if not value:
        return None
    if value not in FORMATS:
        raise UsageProblem([f"{ENV_FORMAT}={value}: not a format; one of {', '.join(FORMATS)}"])
    return value


def format_of(path: Path) -> str | None:
    """The format an output file's extension names (None when it names none)."""
    return EXTENSIONS.get(path.suffix.lower())


def targets(outputs: Sequence[Path], fmt: str | None) -> list[Target]:
    """Destinations of a report: each ``-o`` file, or stdout when there is none."""
    default = fmt or env_format()
    if not outputs:
        return [Target(None, default or "table")]
    out = []
    for p in outputs:
        chosen = fmt or format_of(p) or default
        if chosen is None:
            raise UsageProblem(
                [
                    f"{p}: cannot tell the report format from the extension {p.suffix or '(none)'};"
                    f" give --format or one of {', '.join(sorted(EXTENSIONS))}"
                ]
            )
        out.append(Target(p, chosen))
    return out


def check(ts: Sequence[Target]) -> None:
    """Create the folders of every output file before the audit runs (fail early)."""
    for t in ts:
        if t.path is not None:
            prepare_output(t.path)


def findings(data: Any) -> list[str]:
    """One plain line per violation (``-q``): severity, contract, trace, step, tool, evidence."""
    from sponsio_audit.cli.listing import cell

    lines = []
    for v in data.blamed:
        tool = f" {cell(v['tool'])}" if v["tool"] else ""
        lines.append(
            f"{v['severity']} {cell(v['contract_id'])} trace {cell(v['trace_id'])} "
            f"step {v['seq']}{tool}: {cell(v['evidence'])}"
        )
    return lines


def _text(data: Any, fmt: str, fail_on: str, limit: int) -> str:
    """The text of a non-table format, with the render options where the renderers take them."""
    from sponsio_audit import report

    try:
        from sponsio_audit.report.options import RenderOptions
    except ImportError:  # renderers without options (before the report options landed)
        return report.render(data, fmt)
    render: Any = report.render
    return str(render(data, fmt, RenderOptions(fail_on=fail_on, limit=limit)))


def _binary(stream: Any) -> Any:
    """The byte stream under a text stream (None when it has none)."""
    return getattr(stream, "buffer", None)


def _write_chunks(out: Any, data: Any) -> None:
    """The JSON report written as its UTF-8 pieces (``jsonfmt.chunks``: never one big string)."""
    from sponsio_audit.report import jsonfmt

    for chunk in jsonfmt.chunks(data):
        out.write(chunk)
    out.flush()


def _render_table(data: Any, top: int, **console: Any) -> None:
    """The ``table`` report on a rich ``Console(**console)`` (rich and the terminal renderer
    are imported only for this format: 15-20 ms of start-up the others need not pay)."""
    from rich.console import Console

    from sponsio_audit.report import terminal

    terminal.render(data, Console(highlight=False, **console), top)


def write(
    data: Any,
    t: Target,
    *,
    quiet: bool = False,
    limit: int = 20,
    fail_on: str = "high",
    header: str | None = None,
) -> None:
    """Render ``data`` in ``t.fmt`` to ``t.path`` (or stdout); ``limit``: top violations shown
    by ``table`` (0: all)."""
    from sponsio_audit.cli.listing import cell

    top = limit if limit > 0 else max(1, len(data.blamed_column("blamed")))

    if t.path is None:
        if t.fmt == "table" and quiet:
            for line in findings(data):
                sys.stdout.write(line + "\n")
        elif t.fmt == "table":
            if header:
                sys.stdout.write(cell(header) + "\n")
            _render_table(data, top)
        elif t.fmt == "json" and _binary(sys.stdout) is not None:
            sys.stdout.flush()
            _write_chunks(_binary(sys.stdout), data)
        else:
            sys.stdout.write(_text(data, t.fmt, fail_on, limit))
        sys.stdout.flush()
        return
    prepare_output(t.path)
    with _displaced(t.path):
        if t.fmt == "json" and os.linesep == "\n":  # the bytes text mode writes, without a copy
            with writing(t.path), replaced(t.path, "wb") as out:
                _write_chunks(out, data)
            return
        with writing(t.path), replaced(t.path, "w") as f:
            if t.fmt == "table":
                if header:
                    f.write(cell(header) + "\n")
                _render_table(data, top, file=f, width=FILE_WIDTH, no_color=True)
            else:
                f.write(_text(data, t.fmt, fail_on, limit))


@contextlib.contextmanager
def _displaced(path: Path) -> Iterator[None]:
    """Hold the report ``path`` replaces open while the new one is renamed over it, and close
    it on a thread of its own after: the last close frees the old file's pages (an 83 MB report:
    45 ms), beside the rest of the command instead of inside the rename (POSIX only)."""
    fd = None
    if os.name == "posix" and not path.is_symlink() and path.is_file():
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # no longer a file: let it be
                os.close(fd)
                fd = None
    if fd is None:
        yield
        return
    try:
        yield
    finally:
        threading.Thread(target=_close, args=(fd,), name="sponsio-audit-close", daemon=True).start()


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
