"""Provenance in every report: what ran, when, with which contracts, on which inputs.

Expected values are computed here from the files themselves (sha256 of
the bytes, records = lines of a JSON-lines file, the installed
distribution's version), never read back from the tool.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import CONFIG, TRACES, demo, run


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, datetime, datetime]:
    """An audit by the real command line (a subprocess: its argv is the command recorded)."""
    db = tmp_path_factory.mktemp("prov") / "a.duckdb"
    before = datetime.now(timezone.utc).replace(microsecond=0)
    cli = "from sponsio_audit.cli import app; app()"  # the console script's entry point
    cmd = [sys.executable, "-c", cli, "scan", str(TRACES), "-c", str(CONFIG)]
    proc = subprocess.run(
        [*cmd, "--db", str(db), "-q"], capture_output=True, text=True, check=False
    )
    after = datetime.now(timezone.utc)
    assert proc.returncode == 1, proc.stderr
    return db, before, after


def _render(db: Path, fmt: str, tmp_path: Path) -> str:
    out = tmp_path / f"r.{fmt}"
    assert run("report", "--db", db, "-f", fmt, "-o", out).exit_code == 0
    return out.read_text(encoding="utf-8")


def test_json_provenance(audited: tuple[Path, datetime, datetime], tmp_path: Path) -> None:
    db, before, after = audited
    doc: dict[str, Any] = json.loads(_render(db, "json", tmp_path))
    assert doc["schema_version"] == "1.2"
    p = doc["provenance"]
    assert p["tool"] == "sponsio-audit" and p["tool_version"] == version("sponsio-audit")
    assert p["semantics_version"]
    at = datetime.fromisoformat(p["run_at"].replace("Z", "+00:00"))
    assert before <= at <= after
    assert "scan" in p["command"] and str(CONFIG) in p["command"]
    files = {Path(c["path"]).resolve(): c for c in p["contract_files"]}
    assert files[CONFIG.resolve()]["sha256"] == _sha(CONFIG)
    assert files[CONFIG.resolve()]["contracts"] == CONFIG.read_text().count("- id: ")
    inputs = {Path(f["path"]).name: f for f in p["inputs"]}
    assert set(inputs) == {demo.SUPPORT, demo.CODING, demo.WORKFLOW, demo.METRICS}
    for name, f in inputs.items():
        assert f["sha256"] == _sha(TRACES / name)
    support = TRACES / demo.SUPPORT
    assert inputs[demo.SUPPORT]["records"] == len(support.read_text().splitlines())
    assert inputs[demo.METRICS]["skipped"] == 1  # OTLP metrics: not traces


def test_every_format_carries_it(audited: tuple[Path, datetime, datetime], tmp_path: Path) -> None:
    db, _, _ = audited
    doc = json.loads(_render(db, "json", tmp_path))
    p = doc["provenance"]
    sha = _sha(CONFIG)
    ver = p["tool_version"]
    html = _render(db, "html", tmp_path)
    section = html[html.index('<section id="provenance">') : html.index("</section>")]
    assert sha in section and ver in section and p["run_at"] in section
    md = _render(db, "markdown", tmp_path)
    assert sha in md and p["run_at"] in md
    table = _render(db, "table", tmp_path)
    assert sha in table and p["run_at"] in table
    sarif = json.loads(_render(db, "sarif", tmp_path))
    inv = sarif["runs"][0]["invocations"][0]
    assert inv["startTimeUtc"] == p["run_at"] and "scan" in inv["commandLine"]
    assert sarif["runs"][0]["tool"]["driver"]["version"] == ver
    hashes = {
        a["location"]["uri"]: a.get("hashes", {}).get("sha-256")
        for a in sarif["runs"][0]["artifacts"]
    }
    assert sha in hashes.values()
    junit = _render(db, "junit", tmp_path)
    assert re.search(
        rf'<property name="contract_file" value="[^"]*sponsio.yaml sha256 {sha}"', junit
    )
    assert f'name="run_at" value="{p["run_at"]}"' in junit
