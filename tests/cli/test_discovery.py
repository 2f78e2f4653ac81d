"""Config discovery: sponsio.yaml, then .sponsio.yaml, then pyproject.toml, up to the repo root."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import CONFIG, TRACES, cli, demo

DEMO_IDS = {cid for _n, cid, _t in demo.PLANTED}


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    return repo


def _ids(cwd: Path, *extra: str) -> set[str]:
    res = cli("scan", TRACES, "-f", "json", "--fail-on", "none", *extra, cwd=cwd)
    assert res.exit_code == 0, res.output
    return {c["id"] for c in json.loads(res.stdout)["contracts"]}


def _default_ids() -> set[str]:
    from sponsio_audit.config import load_pack

    return {c.id for c in load_pack("default").contracts}


def test_found_in_a_parent_folder_up_to_the_repository_root(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shutil.copy(CONFIG, repo / "sponsio.yaml")
    assert _ids(repo / "a" / "b") == DEMO_IDS
    # above the repository root nothing is looked for: the default pack
    shutil.move(repo / "sponsio.yaml", tmp_path / "sponsio.yaml")
    assert _ids(repo / "a" / "b") == _default_ids()


def test_order_in_one_folder_and_the_nearest_folder_wins(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    one = (
        'version: "1"\nagents:\n  "*":\n    contracts:\n'
        '      - {id: %s, G: {ltl: "G !called(x)"}}\n'
    )
    (repo / ".sponsio.yaml").write_text(one % "hidden")
    assert _ids(repo) == {"hidden"}
    (repo / "sponsio.yaml").write_text(one % "plain")
    assert _ids(repo) == {"plain"}
    (repo / "a" / ".sponsio.yaml").write_text(one % "nearer")
    assert _ids(repo / "a" / "b") == {"nearer"}
    # an explicit --contracts or --pack skips discovery
    assert _ids(repo / "a", "-c", str(CONFIG)) == DEMO_IDS


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_pyproject_table(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shutil.copy(CONFIG, repo / "a" / "contracts.yaml")
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.sponsio-audit]\n'
        'contracts = ["a/contracts.yaml"]\npacks = ["default"]\n'
    )
    assert _ids(repo / "a" / "b") == DEMO_IDS | _default_ids()
    (repo / "pyproject.toml").write_text("[tool.sponsio-audit]\nbogus = 1\n")
    res = cli("scan", TRACES, cwd=repo)
    assert res.exit_code == 2
    where = repo / "pyproject.toml"
    assert res.stderr.startswith(f"{where}: tool.sponsio-audit.bogus: unknown key")


def test_show_config_and_the_report_header(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shutil.copy(CONFIG, repo / "sponsio.yaml")
    res = cli("scan", "--show-config", cwd=repo / "a")
    assert res.exit_code == 0, res.output
    assert str(repo / "sponsio.yaml") in res.stdout
    assert f"{len(DEMO_IDS)} contracts" in res.stdout
    assert "found" in res.stdout and str(repo) in res.stdout
    table = cli("scan", TRACES, "--fail-on", "none", cwd=repo / "a")
    first = table.stdout.splitlines()[0]
    assert first.startswith("contracts: ") and str(repo / "sponsio.yaml") in first


def test_validate_without_files_checks_the_discovered_one(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    res = cli("validate", cwd=repo / "a")
    assert res.exit_code == 2 and res.stderr.startswith("error: no sponsio.yaml")
    shutil.copy(CONFIG, repo / "sponsio.yaml")
    res = cli("validate", "-f", "json", cwd=repo / "a")
    assert res.exit_code == 0
    assert {c["id"] for c in json.loads(res.stdout)["contracts"]} == DEMO_IDS


def test_stored_audit_keeps_the_sources(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shutil.copy(CONFIG, repo / "sponsio.yaml")
    db = tmp_path / "audit.duckdb"
    assert cli("scan", TRACES, "--db", db, "-q", cwd=repo / "a").exit_code == 1
    first = cli("report", "--db", db, cwd=tmp_path).stdout.splitlines()[0]
    assert first.startswith("contracts: ") and str(repo / "sponsio.yaml") in first
