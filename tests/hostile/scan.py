"""Scan a folder with the real CLI and check what a user of every report format would see.

``scan_folder`` runs ``sponsio-audit scan --strict --fail-on none`` in a
subprocess (its own peak RSS, ``peak.run_cli``), then renders every other
format from the stored audit with ``sponsio-audit report --db`` (typer's
runner: the real command, in this process). ``check`` holds the rules of
issue 13 that hold for every input; ``Expect`` adds the case's own.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import duckdb
from typer.testing import CliRunner

from sponsio_audit.cli import app

from .inputs import ANSI, GOOD, GOOD_EVENTS, MARK, Expect
from .peak import run_cli

REPO = Path(__file__).resolve().parents[2]
REPORT_SCHEMA = REPO / "sponsio_audit" / "report" / "report.schema.json"
EXIT_OK, EXIT_INPUT = 0, 3
RSS_BOUND = 1 << 30
"""Peak RSS any hostile scan may reach (bytes); bench/hostile.py prints the real figures."""
FORMATS = ("json", "sarif", "junit", "html", "markdown", "table")


@dataclass(frozen=True)
class Scanned:
    """What one scan left: exit code, streams, peak RSS, the store file and every report."""

    code: int
    stdout: str
    stderr: str
    peak_rss: int
    db: Path
    reports: dict[str, str]


def scan_folder(folder: Path, work: Path) -> Scanned:
    """``scan`` the folder with the CLI, then ``report`` the stored audit in every format."""
    db = work / "audit.duckdb"
    out = work / "report.json"
    cmd = ["scan", str(folder), "--db", str(db)]
    cmd += ["-f", "json", "-o", str(out), "--strict", "--fail-on", "none", "--jobs", "1"]
    with (work / "stdout").open("wb") as so, (work / "stderr").open("wb") as se:
        code, peak = run_cli(cmd, work / "peak", so, se, cwd=work)
    reports = {"json": out.read_text("utf-8") if out.exists() else ""}
    runner = CliRunner()
    for fmt in FORMATS[1:]:
        res = runner.invoke(app, ["report", "--db", str(db), "-f", fmt])
        assert res.exit_code == 0 and res.exception is None, (fmt, res.output, res.exception)
        reports[fmt] = res.stdout
    return Scanned(
        code,
        (work / "stdout").read_text("utf-8", "replace"),
        (work / "stderr").read_text("utf-8", "replace"),
        peak,
        db,
        reports,
    )


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [tuple(r) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


def _name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


class _Tags(HTMLParser):
    """Every start tag of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def _sarif_schema() -> Path | None:
    """The SARIF 2.1.0 schema when the project ships one (the ``reports`` work), else None."""
    for root in (REPO / "sponsio_audit" / "report", REPO / "tests"):
        for p in sorted(root.rglob("sarif*schema*.json")):
            return p
    return None


def check_reports(s: Scanned, exp: Expect) -> None:
    """Every format well-formed; no markup or escape from trace content where it renders."""
    import jsonschema

    doc = json.loads(s.reports["json"])
    jsonschema.validate(doc, json.loads(REPORT_SCHEMA.read_text("utf-8")))
    sarif = json.loads(s.reports["sarif"])
    assert sarif["version"] == "2.1.0"
    schema = _sarif_schema()
    if schema is not None:
        jsonschema.validate(sarif, json.loads(schema.read_text("utf-8")))
    ET.fromstring(s.reports["junit"].encode("utf-8"))  # well-formed XML 1.0 or raises
    tags = _Tags()
    tags.feed(s.reports["html"])
    tags.close()
    assert "evilmark" not in tags.tags
    for fmt in ("html", "markdown", "table"):
        text = s.reports[fmt]
        assert "\x1b" not in text and "\x07" not in text, fmt  # no terminal escape
        if fmt != "table":  # a terminal shows tags as text; HTML and Markdown would render them
            assert "<evilmark" not in text, fmt
    if "rich" in s.reports["table"]:  # rich markup from content is shown as text
        assert "rich[/bold red]" in s.reports["table"]
    if exp.markup:  # the planted content does reach the reports, escaped
        assert "evilmark" in s.reports["html"] and "evilmark" in s.reports["table"]
        assert MARK not in s.reports["html"] and ANSI not in s.reports["table"]


def check(s: Scanned, exp: Expect) -> None:
    """The rules every hostile scan must keep (issue 13, ARCHITECTURE.md accounting)."""
    for stream in (s.stdout, s.stderr):
        assert "Traceback" not in stream, stream[-3000:]
    assert s.peak_rss < RSS_BOUND, s.peak_rss
    doc = json.loads(s.reports["json"])
    files = {f["file_id"]: f for f in doc["inputs"]["files"]}
    skipped = doc["inputs"]["skipped"]
    # the bad part is named with file, record and a one-line reason
    got = sorted((_name(x["path"]), x["record"], x["reason"]) for x in skipped)
    for name, record, reason in got:
        assert name and record >= 0, (name, record)
        assert reason and "\n" not in reason and "Traceback" not in reason, reason
    want = list(exp.skips)
    unmatched = list(got)
    for name, record, fragment in want:
        hit = next(
            (g for g in unmatched if g[0] == name and record in (None, g[1]) and fragment in g[2]),
            None,
        )
        assert hit is not None, (name, record, fragment, got)
        unmatched.remove(hit)
    either = {(f, r) for f, r, _ in exp.either}
    for f, r, fragment in exp.either:
        for g in unmatched:
            if (g[0], g[1]) == (f, r):
                assert fragment in g[2].lower(), g
    assert all((g[0], g[1]) in either for g in unmatched), unmatched
    # --strict: exit 3 exactly when something was skipped (an `either` record may be)
    assert s.code == (EXIT_INPUT if got else EXIT_OK), (s.code, s.stderr[-2000:])
    # every record is loaded or skipped, never both, never neither: records = loaded + skipped
    loaded: dict[int, set[int]] = {}
    for fid, rec in _rows(
        s.db,
        "SELECT file_id, record FROM spans UNION SELECT file_id, record FROM events "
        "UNION SELECT file_id, record FROM decisions",
    ):
        loaded.setdefault(fid, set()).add(rec)
    skipped_of: dict[int, set[int]] = {}
    for x in skipped:
        skipped_of.setdefault(x["file_id"], set()).add(x["record"])
    for fid, f in files.items():
        ok, bad = loaded.get(fid, set()), skipped_of.get(fid, set())
        assert not ok & bad, (f["path"], ok & bad)
        assert f["skipped"] == len(bad) == sum(1 for x in skipped if x["file_id"] == fid)
        assert f["records"] == len(ok) + len(bad), (f["path"], f["records"], ok, bad)
    summary = doc["summary"]
    assert summary["records"] == sum(f["records"] for f in files.values())
    assert summary["skipped"] == len(skipped)
    (events,) = _rows(s.db, "SELECT count(*) FROM events")[0]
    assert summary["events"] == events
    # every good record is loaded
    by_name = {_name(f["path"]): fid for fid, f in files.items()}
    for name, records in exp.loaded.items():
        assert name in by_name, (name, sorted(by_name))
        assert loaded.get(by_name[name], set()) == set(records), name
    for name in exp.no_spans:
        fid = by_name[name]
        assert _rows(s.db, f"SELECT count(*) FROM spans WHERE file_id = {fid}") == [(0,)]
    good = by_name[GOOD]
    assert _rows(s.db, f"SELECT count(*) FROM events WHERE file_id = {good}") == [(GOOD_EVENTS,)]
    for sql, rows in exp.sql:
        assert _rows(s.db, sql) == rows, sql
    check_reports(s, exp)
