"""Reports: one module per output format, all rendering the same ``ReportData``.

``data.load(store)`` reads a finished audit from the store's tables;
``render(data, fmt, options)`` returns the text of one format (``table`` is
printed on a rich console instead, see ``terminal.render``); ``options``
(``RenderOptions``) carries ``--fail-on`` (JUnit's failures agree with the
exit code) and ``--limit`` (top lists). Reports never
re-evaluate a trace and never write to the store (``api.audit`` does).
"""

from __future__ import annotations

from collections.abc import Callable

from sponsio_audit.report import htmlpage, jsonfmt, junit, markdown, sarif
from sponsio_audit.report.data import ReportData
from sponsio_audit.report.options import RenderOptions

FORMATS = ("table", "json", "markdown", "html", "junit", "sarif")

TEXT_RENDERERS: dict[str, Callable[[ReportData, RenderOptions | None], str]] = {
    "json": jsonfmt.render,
    "markdown": markdown.render,
    "html": htmlpage.render,
    "junit": junit.render,
    "sarif": sarif.render,
}


def render(data: ReportData, fmt: str, options: RenderOptions | None = None) -> str:
    """The report of ``data`` in text format ``fmt`` (not ``table``)."""
    try:
        renderer = TEXT_RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}") from None
    return renderer(data, options)
