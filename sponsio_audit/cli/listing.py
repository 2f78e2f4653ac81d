"""Listings that never cut a name: a rich table on a wide terminal, plain lines otherwise.

``patterns``, ``atoms``, ``validate``, ``traces`` and ``explain`` print
their rows through ``show``: on a terminal at least ``WIDE`` columns wide
a table whose first column is never wrapped; on a narrower terminal or
when piped, one tab-separated line per row (so ``sponsio-audit atoms |
grep arg_field_has`` finds the row whole); with ``--format json`` a JSON
list. Every cell is cleaned of control characters (cells may come from
YAML files or traces) and printed as text, never as markup.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from sponsio_audit.redact import inert

WIDE = 100


def cell(value: object) -> str:
    """A cell as one line of inert text (``redact.inert``: control, bidi and invisible
    characters dropped, line breaks and tabs as spaces)."""
    return "" if value is None else inert(value)


def console_width() -> int | None:
    """The terminal's width, or None when stdout is not a terminal."""
    if not sys.stdout.isatty():
        return None
    from rich.console import Console

    return Console().width


def show(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    fmt: str = "table",
    records: Sequence[dict[str, Any]] | None = None,
    whole: Sequence[str] = (),
) -> bool:
    """Print ``rows`` under ``columns`` (or ``records`` as JSON with ``fmt`` json).

    The first column and the ``whole`` ones are never wrapped; when they do
    not fit the terminal beside the others, plain lines are printed instead.
    True when a rich table was printed.
    """
    if fmt == "json":
        doc = (
            list(records)
            if records is not None
            else [dict(zip(columns, r, strict=True)) for r in rows]
        )
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()
        return False
    keep = {columns[0], *whole}
    widths = {
        name: max((len(cell(r[i])) for r in rows), default=0) for i, name in enumerate(columns)
    }
    need = sum(max(widths[c], len(c)) + 3 for c in keep) + 12 * (len(columns) - len(keep))
    width = console_width()
    if width is None or width < max(WIDE, need):
        lines = ["\t".join(columns), *("\t".join(cell(v) for v in r) for r in rows)]
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
        return False
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(cell(title)), title_justify="left")  # a trace id is not markup
    for name in columns:
        if name in keep:
            table.add_column(name, no_wrap=True, min_width=max(widths[name], len(name)))
        else:
            table.add_column(name, overflow="fold")
    for r in rows:
        table.add_row(*(Text(cell(v)) for v in r))
    Console(highlight=False).print(table)
    return True
