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


def test_contracts_variable_lists_several_files_separated_by_spaces(tmp_path: Path) -> None:
    """README: SPONSIO_AUDIT_CONTRACTS is several files separated by spaces; click read
    "a.yaml b.yaml" as one path (it splits path variables at os.pathsep)."""
    body = 'version: 1\nagents:\n  "*":\n    contracts:\n      - id: {}\n        G:\n'
    body += "          pattern: rate_limit\n          args: [bash, 2]\n"
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.yaml").write_text(body.format(f"only_{name}"), encoding="utf-8")
    env = {"SPONSIO_AUDIT_CONTRACTS": " a.yaml  b.yaml\tc.yaml "}
    res = cli("scan", TRACES, "-f", "json", "--fail-on", "none", env=env, cwd=tmp_path)
    assert res.exit_code == 0, res.stderr
    ids = {c["id"] for c in json.loads(res.stdout)["contracts"]}
    assert ids == {"only_a", "only_b", "only_c"}
    shown = cli("scan", TRACES, "--show-config", env=env, cwd=tmp_path)
    assert shown.stdout.splitlines()[0] == (
        "contracts: a.yaml ($SPONSIO_AUDIT_CONTRACTS), b.yaml ($SPONSIO_AUDIT_CONTRACTS), "
        "c.yaml ($SPONSIO_AUDIT_CONTRACTS)"
    )
    one = cli("scan", TRACES, "-f", "json", "-c", "a.yaml", env=env, cwd=tmp_path)
    assert {c["id"] for c in json.loads(one.stdout)["contracts"]} == {"only_a"}
