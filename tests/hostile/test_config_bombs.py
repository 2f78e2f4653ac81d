"""Hostile contract files: a billion-laughs YAML and a self-referencing alias fail fast with
the YAML path and the limit named, in bounded memory (issue 13: 5 GB without finishing before)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .peak import run_cli

RSS_BOUND = 512 << 20

LAUGHS = (
    'version: "1"\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + (
        'agents:\n  "*":\n    contracts:\n      - id: x\n        severity: high\n'
        "        G:\n          - ltl: 'G(!called(bash))'\n          - *i\n"
    )
)


def _validate(p: Path) -> tuple[int, list[str], int]:
    """Exit code, stderr lines and the fresh process's own peak RSS of ``validate p``."""
    err = p.with_suffix(".err")
    with err.open("wb") as e:
        code, rss = run_cli(["validate", str(p)], p.with_suffix(".peak"), subprocess.DEVNULL, e)
    lines = [x for x in err.read_text("utf-8").splitlines() if x.strip()]
    return code, lines, rss


def test_billion_laughs(tmp_path: Path) -> None:
    """9 levels of 9 aliases (387 420 489 strings): one error with a YAML path and the limit."""
    p = tmp_path / "laughs.yaml"
    p.write_text(LAUGHS)
    code, lines, rss = _validate(p)
    assert code == 2 and rss < RSS_BOUND, (code, rss)
    assert "Traceback" not in "\n".join(lines)
    assert lines[-1] == "1 error(s)"
    (msg,) = lines[:-1]
    assert msg.startswith(f"{p}") and "[" in msg and "limit yaml_nodes=200000" in msg, msg


def test_self_referencing_alias(tmp_path: Path) -> None:
    """``&s [*s]`` is endless: one error naming the path and ``yaml_depth``."""
    p = tmp_path / "cycle.yaml"
    p.write_text('version: "1"\nself: &s [*s]\n')
    code, lines, rss = _validate(p)
    assert code == 2 and rss < RSS_BOUND, (code, rss)
    (msg, _) = lines
    assert msg.startswith(f"{p}:2: self[0][0]") and "limit yaml_depth=200" in msg, msg
