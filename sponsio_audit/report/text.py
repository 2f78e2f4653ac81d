"""Untrusted text made safe for a report medium: one place for XML, Markdown code spans, HTML.

Trace content is untrusted (a file may hold any code point, lone
surrogates included). ``evidence.clean`` drops control and bidi
characters and caps the length; the functions here add what one medium
needs on top of it.

- ``xml_text``: ``clean`` then ``xmlchars.legal`` (XML 1.0 cannot carry
  U+FFFE/U+FFFF, lone surrogates or C0 controls other than tab/newline;
  they become U+FFFD), so JUnit and SARIF stay well formed and UTF-8
  encodable; every XML/JSON renderer also passes its finished text
  through ``legal``.
- ``md_text``: Markdown text with ``&``, ``<``, ``>`` as HTML entities and
  the active characters (``|``, backticks, ``[``/``]`` among them, so no
  link or image can be planted) backslash-escaped; an underscore between
  two letters or digits cannot start emphasis and is left as it is;
- ``code_span``: a Markdown code span (no HTML, links or emphasis is
  interpreted inside one) delimited by one backtick more than the
  longest run inside, with ``|`` escaped so that a table cell stays one
  cell (GitHub's table parser splits on unescaped pipes even in code).
  Text holding ``<``, ``>`` or ``&`` is given as ``md_text`` instead, so
  the Markdown source never holds raw markup, not even inert markup.
"""

from __future__ import annotations

import html
import re

from sponsio_audit.redact import clean
from sponsio_audit.report.xmlchars import legal

NO_REASON = "no reason recorded (the trace lacks a fact the contract needs)"
"""Shown for an unverifiable verdict whose reason column is empty."""
_TICKS = re.compile(r"`+")
_HTML_ACTIVE = re.compile(r"[<>&]")
_MD_ACTIVE = re.compile(r"([\\`*\[\]|~#!]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def xml_text(value: object, limit: int = 500) -> str:
    """``value`` as text XML 1.0 (and UTF-8) can carry; None is ""."""
    if value is None:
        return ""
    return legal(clean(value, limit))


def xml_safe(text: str) -> str:
    """``text`` (already built from cleaned pieces; newlines kept) with XML-illegal code points
    replaced."""
    return legal(text)


def code_span(value: object, limit: int = 120, *, cell: bool = True) -> str:
    """``value`` as an inert Markdown code span (``cell``: safe inside a table cell)."""
    text = xml_text(value, limit)
    if _HTML_ACTIVE.search(text) or not text.strip():  # no raw markup at all, even inert
        return md_text(text, limit)  # (and a code span of spaces only would keep them all)
    if cell:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(m) for m in _TICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or text.strip() != text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_text(value: object, limit: int = 120) -> str:
    """``value`` as inert Markdown text: ``& < >`` as entities, active characters escaped."""
    text = xml_text(value, limit)
    return _MD_ACTIVE.sub(r"\\\1", html.escape(text, quote=False))
