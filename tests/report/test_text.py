"""Untrusted text in a report medium is shown exactly as recorded and is never markup.

Markdown is parsed back with markdown-it (CommonMark + GFM tables, as
GitHub renders a step summary); XML with the standard library parser.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sponsio_audit.redact import clean
from sponsio_audit.report.text import code_span, md_text, xml_text

GFM = MarkdownIt("commonmark").enable("table")
ACTIVE = "\\`*_[]|~#!<>&()\"' -:/."
texts = st.text(
    alphabet=st.one_of(st.sampled_from(ACTIVE), st.characters(codec="utf-8"), st.just("\ufffe")),
    min_size=1,
    max_size=40,
)


def _cell(markdown: str) -> str:
    page = GFM.render(f"| h | x |\n|---|---|\n| {markdown} | end |\n")
    m = re.search(r"<tbody>\s*<tr>\s*<td>(.*?)</td>\s*<td>end</td>", page, re.S)
    assert m is not None, page  # still two cells: nothing broke out of the first
    return m.group(1)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_md_text_renders_as_the_text_itself(value: str) -> None:
    cell = _cell(md_text(value, 100))
    assert "<" not in cell.replace("&lt;", "")  # no element at all
    assert html.unescape(cell) == xml_text(value, 100).strip()


@settings(max_examples=150, deadline=None)
@given(texts)
def test_code_span_renders_as_the_text_itself(value: str) -> None:
    cell = _cell(code_span(value, 100))
    want = xml_text(value, 100)
    if re.search(r"[<>&]", want) or not want.strip():
        inner = cell  # given as escaped text instead (no raw markup in the source)
        want = want.strip()
    else:
        m = re.fullmatch(r"<code>(.*)</code>", cell, re.S)
        assert m is not None, cell
        inner = m.group(1)
    assert "<" not in inner.replace("&lt;", "")
    assert html.unescape(inner) == want


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_xml_text_always_parses_back(value: str) -> None:
    root = ET.Element("t", attr=xml_text(value))
    root.text = xml_text(value)
    back = ET.fromstring(ET.tostring(root, encoding="unicode").encode("utf-8"))
    assert back.text in (xml_text(value), None if not xml_text(value) else "")
    assert len(clean(value, 500)) == len(back.get("attr", ""))  # replaced, never dropped


def test_line_breaks_become_one_space_not_glued_words() -> None:
    """An excerpt of a multi-line prompt stays readable on one line ("be careful user: hi",
    not "be carefuluser: hi"); other control characters are still dropped."""
    from sponsio_audit.redact import clean

    assert clean("be careful\nuser: hi") == "be careful user: hi"
    assert clean("a\r\n\tb\u2028c\x1b[31md") == "a b c[31md"
