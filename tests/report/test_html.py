"""The HTML report in headless Chromium: every violation without scripts, inert trace content,
timelines opened by their links, a layout that fits 1400 px and a phone."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.report import browser
from tests.report.conftest import CONFIG, TRACES, demo, native_trace, planted, run

IMG = "<img src=x onerror=\"document.title='img-pwned'\">"
EVIL_CONTRACT = "bot.only_read"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML report of the demo corpus plus a trace whose tool name and args are markup."""
    tmp = tmp_path_factory.mktemp("html")
    corpus = tmp / "corpus"
    shutil.copytree(TRACES, corpus)
    native_trace(
        corpus / "evil.jsonl",
        [
            {
                "ts": 1,
                "agent": "bot",
                "type": "tool_call",
                "tool": IMG,
                "args": {"q": "</script><script>document.title='args-pwned'</script>"},
            },
        ],
    )
    cfg = tmp / "c.yaml"
    cfg.write_text(
        CONFIG.read_text() + f"  bot:\n    contracts:\n      - id: {EVIL_CONTRACT}\n"
        "        G:\n          pattern: tool_allowlist\n          args: [read_file]\n"
    )
    out = tmp / "report.html"
    assert run("scan", corpus, "-c", cfg, "-f", "html", "-o", out).exit_code == 1
    return out


def _violation_rows(dom: str) -> list[str]:
    body = re.search(r'<table id="violations">.*?<tbody>(.*?)</tbody>', dom, re.S)
    assert body is not None
    return re.findall(r"<tr data-severity=.*?</tr>", body.group(1), re.S)


def test_every_violation_is_in_the_page_with_scripts_off(page: Path, tmp_path: Path) -> None:
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    dom = browser.dump_dom(page, tmp_path / "profile")
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title is not None and title.group(1) == "sponsio-audit report"
    assert "<img src=" not in dom  # the planted tag stayed text
    rows = _violation_rows(dom)
    found = set()
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        trace = re.sub(r"<[^>]+>", "", cells[2])
        found.add((trace, cells[1]))
    evil = {(t, c) for t, c in found if c == EVIL_CONTRACT}
    assert found - evil == planted() and len(evil) == 1
    assert len(rows) == len(planted()) + 1
    heading = re.search(r"<h2>Violations \((.*?)\)</h2>", dom, re.S)
    assert heading is not None and f"all {len(rows)} listed" in heading.group(1)
    assert re.search(r'<p id="controls" hidden="?', dom)  # filter controls need the script


def test_trace_link_opens_its_timeline(page: Path, tmp_path: Path) -> None:
    tid = demo.trace_id("coder-loop")
    dom = browser.dump_dom(page, tmp_path / "profile", fragment=f"trace-{tid}")
    link = f'<a href="#trace-{tid}">{tid}</a>'
    assert link in dom
    block = re.search(
        r'<details class="timeline"([^>]*)><summary>[^<]*<span class="mono">'
        + re.escape(tid)
        + r"</span>(.*?)</details>",
        dom,
        re.S,
    )
    assert block is not None
    assert "open" in block.group(1)  # followed the link, no script: the timeline is open
    others = re.findall(r'<details class="timeline" open', dom)
    assert len(others) == 1  # only that one
    body = block.group(2)
    steps = re.search(r'<ul class="blamed-steps">(.*?)</ul>\s*(?:<p>|<div)', body, re.S)
    assert steps is not None
    assert "coder.no_test_loop" in steps.group(1)
    assert steps.group(1).count("<li>step ") == demo.LOOP_N - 5 - 1  # offending events
    blamed_row = re.search(
        r'<tr class="blamed"><td class="num">(\d+)</td><td>[^<]*</td><td class="mono">(\w+)</td>',
        body,
    )
    assert blamed_row is not None
    step, span = blamed_row.groups()
    assert f"step {step}, span <code>{span}</code>" in steps.group(1)


@pytest.mark.parametrize("width", [1400, 390])
def test_layout_fits_desktop_and_phone(page: Path, tmp_path: Path, width: int) -> None:
    scroll, client = browser.layout(page, width, tmp_path / "profile")
    assert client <= width and client >= width - 20  # the frame's width (less a scrollbar)
    assert scroll <= client, f"the page is {scroll} px wide in {client} px: horizontal overflow"
    shot = tmp_path / f"report-{width}.png"
    w, h = browser.screenshot(page, width, 1600, shot, tmp_path / "profile2")
    assert w == max(width, 500) and h == 1600
    assert shot.stat().st_size > 20_000  # rendered content, not a blank page


def test_page_script_runs_under_its_own_policy(page: Path, tmp_path: Path) -> None:
    """With scripts on, the CSP admits the page's script (pinned by hash): controls appear."""
    dom = browser.run(page.as_uri(), tmp_path / "profile", "--dump-dom")
    assert re.search(r'<p id="controls">', dom)  # unhidden by the script
    assert len(_violation_rows(dom)) == len(planted()) + 1  # the script removed nothing
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title is not None and title.group(1) == "sponsio-audit report"  # no planted script ran
    assert "<img src=" not in dom
