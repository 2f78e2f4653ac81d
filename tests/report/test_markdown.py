"""Markdown for $GITHUB_STEP_SUMMARY, parsed back with markdown-it (CommonMark + GFM tables)."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

from sponsio_audit.ingest import Store
from sponsio_audit.report import markdown
from sponsio_audit.report.data import load
from sponsio_audit.report.options import RenderOptions
from tests.report.conftest import CONFIG, TRACES, native_trace, planted, run

GFM = MarkdownIt("commonmark").enable("table")
EVIL = "x|y`z<b>&[link](http://e)_u_"


def _evil_report(tmp_path: Path) -> str:
    trace = native_trace(
        tmp_path / "t.jsonl",
        [{"ts": 1, "agent": "bot", "type": "tool_call", "tool": EVIL, "args": {}}],
    )
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        'agents:\n  "*":\n    contracts:\n      - id: only_read\n        G:\n'
        "          pattern: tool_allowlist\n          args: [read_file]\n"
    )
    res = run("scan", trace, "-c", cfg, "-f", "markdown")
    assert res.exit_code == 1, res.output
    return str(res.stdout)


def test_trace_content_is_inert(tmp_path: Path) -> None:
    text = _evil_report(tmp_path)
    page = GFM.render(text)
    assert "<b>" not in page and "<a " not in page and "<em>" not in page
    for table in re.findall(r"<table>.*?</table>", page, re.S):
        head = len(re.findall(r"<th>", table.split("</thead>")[0]))
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.S):
            assert len(re.findall(r"<td", row)) == head  # no cell planted by the pipe
    escaped = EVIL.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert f"<td>{escaped}</td>" in page  # shown exactly as recorded, as text


def test_ids_are_code_spans_and_each_contract_has_a_details_block(tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    assert run("scan", TRACES, "-c", CONFIG, "-f", "markdown", "-o", out).exit_code == 1
    text = out.read_text(encoding="utf-8")
    assert "\\_" not in text  # no escaped underscores: ids are code spans, the rest intraword
    assert "`support.refund_once`" in text
    page = GFM.render(text)
    blocks = re.findall(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", page, re.S)
    violated = {c for _, c in planted()}
    assert {s.split(" ")[0] for s, _ in blocks} == violated
    for summary, body in blocks:
        cid = summary.split(" ")[0]
        traces = {t for t, c in planted() if c == cid}
        cells = set(re.findall(r"<td><code>([0-9a-f]{32})</code></td>", body))
        assert cells == traces


def test_limit_caps_the_top_list_and_says_so(demo_db: Path) -> None:
    store = Store.open(demo_db)
    try:
        data = load(store, timelines=False)
    finally:
        store.close()
    text = markdown.render(data, RenderOptions(limit=3))
    top = text[text.index("### Top violations") :].split("\n\n")
    assert (
        top[0] == f"### Top violations (3 of {len(planted())}; `--limit 0` lists all; "
        "`-f json` has every violation)"
    )
    rows = [line for line in top[1].splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 3
    contracts = [row.split(" | ")[1] for row in rows]
    assert len(set(contracts)) == 3  # spread across contracts
    everything = markdown.render(data, RenderOptions(limit=0))
    assert f"### Top violations (all {len(planted())})" in everything
