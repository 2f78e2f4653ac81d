"""``--version``, ``python -m sponsio_audit``, help with an example per command, lazy imports,
``init``, the LICENSE."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.cli.conftest import REPO, cli, proc

COMMANDS = ("scan", "report", "explain", "traces", "validate", "patterns", "atoms", "init")
PYPROJECT = (REPO / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib on 3.10


def test_version_and_module_entry_point() -> None:
    res = proc("--version")
    assert res.returncode == 0
    assert res.stdout.strip() == f"sponsio-audit {version('sponsio-audit')}"
    assert "Usage: sponsio-audit" in proc("--help").stdout
    old = subprocess.run(
        [sys.executable, "-m", "sponsio_audit.cli", "--version"], capture_output=True, text=True
    )
    assert (old.returncode, old.stdout) == (0, res.stdout)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_an_example_and_plain_types(command: str) -> None:
    res = cli(command, "--help")
    assert res.exit_code == 0
    assert f"Example: sponsio-audit {command}" in res.stdout
    assert "<list[" not in res.stdout and "<bool>" not in res.stdout and "<str>" not in res.stdout


def test_help_does_not_import_the_heavy_parts() -> None:
    code = (
        "import sys\n"
        "from sponsio_audit.cli import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('pyarrow', 'duckdb', 'numpy') if m in sys.modules)\n"
        "print('HEAVY', ','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "HEAVY"


def test_init_writes_a_starter_that_loads_like_the_pack(tmp_path: Path) -> None:
    import yaml

    from sponsio_audit.config import load_config, load_pack

    target = tmp_path / "sponsio.yaml"
    res = cli("init", "--pack", "default", "--path", target)
    assert res.exit_code == 0, res.output
    text = target.read_text()
    assert text.count("\n#") >= 5  # commented
    doc = yaml.safe_load(text)
    assert doc["agents"]["*"]["include"] == ["default"]
    mine = {c.id for c in load_config(target).contracts}
    assert len(mine) == len(load_pack("default").contracts) > 0
    again = cli("init", "--path", target)
    assert again.exit_code == 2 and "exists already" in again.stderr
    bad = cli("init", "--pack", "no-such-pack", "--path", tmp_path / "x.yaml")
    assert bad.exit_code == 2 and "no-such-pack" in bad.stderr


def test_license_matches_pyproject() -> None:
    assert 'license = { text = "Apache-2.0" }' in PYPROJECT
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
