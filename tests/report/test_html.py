"""The HTML report in headless Chromium: planted scripts do not run, the JS table renders."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sponsio_audit.report.htmlpage import script_json
from tests.report.conftest import CONFIG, TRACES, demo, native_trace, planted, run

CHROMIUM = next(
    (
        p
        for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
        if p and Path(p).exists()
    ),
    None,
)
IMG = "<img src=x onerror=\"document.title='img-pwned'\">"


def _dump_dom(page: Path, profile: Path) -> str:
    if CHROMIUM is None:
        pytest.skip("Chromium not found (install the Debian package `chromium`)")
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=2000",
        "--dump-dom",
        page.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_planted_script_does_not_run_and_table_renders(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
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
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        CONFIG.read_text() + "  bot:\n    contracts:\n      - id: bot.only_read\n"
        "        G:\n          pattern: tool_allowlist\n          args: [read_file]\n"
    )
    page = tmp_path / "report.html"
    assert run("scan", corpus, "-c", cfg, "-f", "html", "-o", page).exit_code == 1
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    dom = _dump_dom(page, tmp_path / "profile")
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title is not None and title.group(1) == "sponsio-audit report"
    assert "PWNED</body>" not in dom.replace("\n", "") and not re.search(r">PWNED<", dom)
    assert "<img src=" not in dom  # the planted tag stayed text
    body = re.search(r'<table id="violations">.*?<tbody>(.*?)</tbody>', dom, re.S)
    assert body is not None
    rows = re.findall(r"<tr data-severity=", body.group(1))
    assert len(rows) == len(planted()) + 1  # the JS built one row per violation
    assert re.search(r'id="shown">' + str(len(rows)) + "<", dom)
    assert demo.trace_id("refund-no-policy-1") in body.group(1)


def test_script_json_escapes() -> None:
    text = script_json({"a": "</script><!-- & \u2028\u2029 >"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
