"""Markdown posted as a pull-request comment plants no @mention and no bare-URL autolink.

GitHub links ``@user`` (and notifies that user), ``https://…`` and
``www.…`` in plain text; trace content (here a tool name, which is also in
the evidence) must reach the report as the same readable text without them.
Rendered back with markdown-it (CommonMark + GFM tables), the cells show the
text exactly as recorded.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from markdown_it import MarkdownIt

from tests.report.conftest import native_trace, run

GFM = MarkdownIt("commonmark").enable("table")
TOOL = "@octocat see https://evil.example/fix www.evil.example [fix](1)"
CONTRACT = (
    'agents:\n  "*":\n    contracts:\n      - id: only_read\n        G:\n'
    "          pattern: tool_allowlist\n          args: [read_file]\n"
)


def _report(tmp_path: Path, tool: str) -> str:
    trace = native_trace(
        tmp_path / "t.jsonl",
        [{"ts": 1, "agent": "bot", "type": "tool_call", "tool": tool, "args": {}}],
    )
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONTRACT)
    res = run("scan", trace, "-c", cfg, "-f", "markdown")
    assert res.exit_code == 1, res.output
    return str(res.stdout)


def _rows(text: str, marker: str) -> list[str]:
    """The table rows holding ``marker`` (of the tool name: the violation rows)."""
    return [line for line in text.splitlines() if line.startswith("| ") and marker in line]


def test_no_mention_or_autolink_survives_in_the_cells(tmp_path: Path) -> None:
    text = _report(tmp_path, TOOL)
    rows = _rows(text, "octocat")
    assert len(rows) == 2  # top violations and the contract's block
    for row in rows:
        assert "@octocat" not in row and "@" not in row
        assert "://" not in row
        assert "www.e" not in row.lower()
        assert "&#64;octocat" in row  # the entity forms: rendered as the literal text
        assert "https&#58;//evil.example/fix" in row
        assert "www&#46;evil.example" in row
        assert "\\[fix\\](1)" in row
    page = GFM.render(text)
    assert "<a " not in page
    cells = re.findall(r"<td>([^<]*)</td>", page)
    shown = html.escape(TOOL, quote=False)
    assert shown in cells  # the tool cell reads exactly as recorded
    assert any(c.startswith(shown + " called at step") for c in cells)  # and the evidence


def test_upper_case_and_e_mail_forms_are_broken_too(tmp_path: Path) -> None:
    text = _report(tmp_path, "mail ops@evil.example or WWW.Evil.example/x or FTP://h/x")
    rows = _rows(text, "mail ops")
    assert len(rows) == 2
    for row in rows:
        assert "@" not in row and "://" not in row and "WWW." not in row
    page = GFM.render(text)
    assert "mail ops@evil.example or WWW.Evil.example/x or FTP://h/x" in page
