"""The shipped dangerous-command and SQL lists are Sponsio 0.2.0a21's, read from its wheel."""

from __future__ import annotations

from importlib.resources import files

import yaml

from . import oracle


def shipped() -> dict:
    text = files("sponsio_audit.packs").joinpath("lists/sponsio-0.2.0a21.yaml").read_text("utf-8")
    return yaml.safe_load(text)


def test_dangerous_bash_commands_default_is_sponsios() -> None:
    (forbidden,) = oracle.sponsio_pattern("dangerous_bash_commands", []).args
    assert shipped()["version"] == oracle.VERSION
    assert tuple(shipped()["dangerous_bash_commands"]) == tuple(forbidden)


def test_dangerous_sql_verbs_default_is_sponsios() -> None:
    tool, verbs = oracle.sponsio_pattern("dangerous_sql_verbs", []).args
    ours = shipped()["dangerous_sql_verbs"]
    assert (ours["tool"], tuple(ours["verbs"])) == (tool, tuple(verbs))
