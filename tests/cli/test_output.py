"""A summary line on stderr, ``-q`` findings only, ``--silent`` nothing; outputs by extension."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import CONFIG, TRACES, cli, demo, demo_severity

PLANTED = len(demo.PLANTED)
TRACE_COUNT = len(demo.PLANTED) + len(demo.CLEAN)  # every planted violation has its own trace


def _expected_summary() -> str:
    sev = demo_severity()
    high = sum(1 for _name, cid, _tool in demo.PLANTED if sev[cid] == "high")
    traces = len({name for name, _cid, _tool in demo.PLANTED})
    return (
        f"scanned 4 files, {TRACE_COUNT} traces, {len(sev)} contracts: "
        f"{PLANTED} violations ({high} high) in {traces} traces, 0 unverifiable"
    )


def test_summary_line_on_stderr_even_with_output(tmp_path: Path) -> None:
    res = cli("scan", TRACES, "-c", CONFIG, "-o", tmp_path / "audit.json")
    assert res.exit_code == 1
    assert res.stdout == ""
    assert res.stderr.splitlines()[-1].startswith(_expected_summary())


def test_quiet_prints_findings_only() -> None:
    res = cli("scan", TRACES, "-c", CONFIG, "-q")
    assert res.exit_code == 1
    assert res.stderr == ""
    lines = res.stdout.splitlines()
    assert len(lines) == PLANTED
    found = {(ln.split()[1], ln.split()[3]) for ln in lines}
    assert found == {(cid, demo.trace_id(name)) for name, cid, _tool in demo.PLANTED}


def test_silent_prints_nothing_but_writes_files(tmp_path: Path) -> None:
    out = tmp_path / "audit.sarif"
    res = cli("scan", TRACES, "-c", CONFIG, "--silent", "-o", out)
    assert res.exit_code == 1
    assert (res.stdout, res.stderr) == ("", "")
    assert json.loads(out.read_text())["version"] == "2.1.0"
    res = cli("scan", TRACES, "-c", CONFIG, "--silent")
    assert (res.exit_code, res.stdout, res.stderr) == (1, "", "")


def test_write_baseline_says_what_it_wrote_and_exits_0(tmp_path: Path) -> None:
    base = tmp_path / ".sponsio" / "baseline.json"
    res = cli("scan", TRACES, "-c", CONFIG, "-q", "--write-baseline", base)
    assert res.exit_code == 0
    # the two refunds without a policy check are one finding: same contract, tool, class
    fingerprints = PLANTED - 1
    assert f"wrote a baseline of {PLANTED} violations ({fingerprints} fingerprints) to {base}" in (
        res.stderr
    )
    entries = json.loads(base.read_text())["violations"]
    assert sum(e["violations"] for e in entries) == PLANTED and len(entries) == fingerprints


def test_format_follows_each_output_extension(tmp_path: Path) -> None:
    sarif, html, js, md, xml = (
        tmp_path / n for n in ("a.sarif", "a.html", "a.json", "a.md", "a.xml")
    )
    res = cli(
        "scan", TRACES, "-c", CONFIG, *(x for p in (sarif, html, js, md, xml) for x in ("-o", p))
    )
    assert res.exit_code == 1, res.output
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert html.read_text().lstrip().lower().startswith("<!doctype html")
    assert json.loads(js.read_text())["summary"]["violations"] == PLANTED
    assert md.read_text().lstrip().startswith("#")
    assert xml.read_text().lstrip().startswith("<?xml") and "<testsuite" in xml.read_text()
    # -f wins over the extension
    forced = tmp_path / "forced.html"
    assert cli("scan", TRACES, "-c", CONFIG, "-f", "json", "-o", forced).exit_code == 1
    assert json.loads(forced.read_text())["schema"].startswith("sponsio-audit/report/")


def test_unknown_extension_without_format_is_an_error(tmp_path: Path) -> None:
    res = cli("scan", TRACES, "-c", CONFIG, "-o", tmp_path / "audit.out")
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {tmp_path / 'audit.out'}: cannot tell the report format")


def _title(stdout: str) -> str:
    return next(ln for ln in stdout.splitlines() if "Top violations" in ln)


def test_cut_list_says_how_to_see_the_rest() -> None:
    cut = _title(cli("scan", TRACES, "-c", CONFIG, "--limit", "3").stdout)
    assert f"3 of {PLANTED}" in cut and "--limit" in cut
    res = cli("scan", TRACES, "-c", CONFIG, "--limit", "0")
    assert "--limit" not in _title(res.stdout)
    for name, _cid, _tool in demo.PLANTED:
        assert demo.trace_id(name)[:12] in res.stdout
