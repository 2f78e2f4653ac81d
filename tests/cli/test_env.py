"""Environment variables for the common options; the command line wins over them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import CONFIG, TRACES, cli, demo


def test_format_variable_sets_stdout_not_files_with_an_extension(tmp_path: Path) -> None:
    res = cli("scan", TRACES, "-c", CONFIG, env={"SPONSIO_AUDIT_FORMAT": "json"})
    assert json.loads(res.stdout)["summary"]["violations"] == len(demo.PLANTED)
    page = tmp_path / "a.html"
    cli("scan", TRACES, "-c", CONFIG, "-o", page, env={"SPONSIO_AUDIT_FORMAT": "json"})
    assert page.read_text().lstrip().lower().startswith("<!doctype html")
    bad = cli("scan", TRACES, "-c", CONFIG, env={"SPONSIO_AUDIT_FORMAT": "pdf"})
    assert bad.exit_code == 2 and "SPONSIO_AUDIT_FORMAT=pdf" in bad.stderr


def test_fail_on_variable_and_the_option_wins() -> None:
    env = {"SPONSIO_AUDIT_FAIL_ON": "none"}
    assert cli("scan", TRACES, "-c", CONFIG, "-q", env=env).exit_code == 0
    assert cli("scan", TRACES, "-c", CONFIG, "-q", "--fail-on", "high", env=env).exit_code == 1


def test_contracts_variable(tmp_path: Path) -> None:
    res = cli("scan", TRACES, "-f", "json", env={"SPONSIO_AUDIT_CONTRACTS": str(CONFIG)})
    ids = {c["id"] for c in json.loads(res.stdout)["contracts"]}
    assert ids == {cid for _n, cid, _t in demo.PLANTED}
