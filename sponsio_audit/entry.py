"""The process's entry point: ``sponsio-audit`` and ``python -m sponsio_audit``.

Loading the command line (typer, every command's module) takes about a tenth of a
second; a Ctrl-C then ended the process with Python's traceback of the import. Here it
ends it as a Ctrl-C during a command does: exit 130 (``cli.common.EXIT_CODES_HELP``),
nothing printed. Nothing heavy is imported before that guard is in place.
"""

from __future__ import annotations

EXIT_INTERRUPTED = 130
"""The command's exit code for an interrupt (also ``cli.common``'s, not imported here)."""


def main() -> None:
    """Load the command line, then run it (``cli.main``)."""
    try:
        from sponsio_audit.cli import main as command
    except KeyboardInterrupt:
        raise SystemExit(EXIT_INTERRUPTED) from None
    command()
