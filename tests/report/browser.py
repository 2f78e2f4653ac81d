"""Headless Debian Chromium for the HTML report tests: DOM dumps, layout probes, screenshots.

Scripts off: ``--blink-settings=scriptEnabled=false`` also stops
``--dump-dom`` (it serialises the DOM with a script), so a page is made
scriptless the way a strict viewer would: a copy whose
Content-Security-Policy allows no script at all. Phone widths: headless
Chromium lays out at least 500 px wide whatever ``--window-size`` says,
so narrower widths are measured in an iframe of that width (same origin
under ``--allow-file-access-from-files``).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

CHROMIUM = next(
    (
        p
        for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
        if p and Path(p).exists()
    ),
    None,
)
_CSP = re.compile(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">')


def need_chromium() -> str:
    """The Chromium binary; skip without it (fail under CI=true, where .ci/run installs it)."""
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing under CI=true (.ci/run installs the Debian package)")
        pytest.skip("Chromium not found (install the Debian package `chromium`)")
    return CHROMIUM


def run(url: str, profile: Path, *flags: str) -> str:
    """Run headless Chromium on ``url`` with ``flags``; its stdout."""
    cmd = [
        need_chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=3000",
        *flags,
        url,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def scriptless(page: Path) -> Path:
    """A copy of ``page`` whose policy allows no script (next to it, same relative links)."""
    html = page.read_text(encoding="utf-8")
    strict = (
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'none'\">"
    )
    assert _CSP.search(html), "the page has no Content-Security-Policy"
    out = page.with_name(page.stem + ".noscript.html")
    out.write_text(_CSP.sub(strict, html), encoding="utf-8")
    return out


def dump_dom(page: Path, profile: Path, fragment: str = "") -> str:
    """The DOM of ``page`` (``#fragment`` followed) after loading, scripts off."""
    url = scriptless(page).as_uri() + (f"#{fragment}" if fragment else "")
    return run(url, profile, "--dump-dom")


def framed(page: Path, width: int, height: int) -> Path:
    """A wrapper page showing ``page`` in an iframe ``width`` px wide; once loaded, the body's
    ``data-layout`` is the framed document's ``scrollWidth x clientWidth``."""
    wrapper = page.with_name(f"{page.stem}.frame{width}.html")
    wrapper.write_text(
        '<!DOCTYPE html><html><body style="margin:0">'
        f'<iframe id="f" src="{page.name}" style="border:0;width:{width}px;height:{height}px">'
        "</iframe><script>document.getElementById('f').addEventListener('load', () => {"
        "const d = document.getElementById('f').contentDocument.documentElement;"
        "document.body.dataset.layout = d.scrollWidth + 'x' + d.clientWidth; });</script>"
        "</body></html>",
        encoding="utf-8",
    )
    return wrapper


def layout(page: Path, width: int, profile: Path) -> tuple[int, int]:
    """(scrollWidth, clientWidth) of ``page`` laid out ``width`` px wide."""
    dom = run(
        framed(page, width, 900).as_uri(),
        profile,
        "--allow-file-access-from-files",
        "--window-size=1500,1000",
        "--dump-dom",
    )
    m = re.search(r'data-layout="(\d+)x(\d+)"', dom)
    assert m is not None, dom[-500:]
    return int(m.group(1)), int(m.group(2))


def screenshot(page: Path, width: int, height: int, out: Path, profile: Path) -> tuple[int, int]:
    """A PNG of ``page`` laid out ``width`` px wide (in a frame); the PNG's (width, height)."""
    run(
        framed(page, width, height).as_uri(),
        profile,
        "--allow-file-access-from-files",
        "--hide-scrollbars",
        f"--window-size={max(width, 500)},{height}",
        f"--screenshot={out}",
    )
    head = out.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    w, h = struct.unpack(">II", head[16:24])
    return int(w), int(h)
