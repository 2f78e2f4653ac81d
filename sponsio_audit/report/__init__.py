"""Reports: one module per output format, all rendering the same ``ReportData``.

``data.load(store)`` reads a finished audit from the store's tables;
``render(data, fmt)`` returns the text of one format (``table`` is printed
on a rich console instead, see ``terminal.render``). Reports never
re-evaluate a trace and never write to the store (``api.audit`` does).
"""

from __future__ import annotations

from collections.abc import Callable

from sponsio_audit.report import htmlpage, jsonfmt, junit, markdown, sarif
from sponsio_audit.report.data import ReportData

FORMATS = ("table", "json", "markdown", "html", "junit", "sarif")

TEXT_RENDERERS: dict[str, Callable[[ReportData], str]] = {
    "json": jsonfmt.render,
    "markdown": markdown.render,
    "html": htmlpage.render,
    "junit": junit.render,
    "sarif": sarif.render,
}


def render(data: ReportData, fmt: str) -> str:
    """The report of ``data`` in text format ``fmt`` (not ``table``)."""
    try:
        return TEXT_RENDERERS[fmt](data)
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}") from None
