"""workspace, <agent> and tool_rename rewrites, generated ids, assumption severity
(ARCHITECTURE.md "Configuration compatibility", SEMANTICS.md §4.2)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import ConfigError, load_config


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


PACK = """
    agents:
      "*":
        contracts:
          - id: scope
            G: {pattern: scope_limit, args: [exec, ["<workspace>/", /tmp]]}
          - id: no_leak
            G: {ltl: "G(!flow(<agent>, external))"}
          - id: no_rm
            G: {ltl: "G(called(exec) -> !arg_has(exec, rm))"}
"""


def test_pack_is_rewritten_for_the_including_agent(tmp_path: Path) -> None:
    write(tmp_path, "pack.yaml", PACK)
    cfg = load_config(write(tmp_path, "sponsio.yaml", """
        agents:
          coder:
            workspace: /srv/repo/
            tool_rename: {exec: Bash}
            include: [pack.yaml]
            contracts:
              - id: own
                G: {pattern: rate_limit, args: [exec, 2]}
    """))  # fmt: skip
    got = {c.id: c.guarantees[0].text for c in cfg.contracts}
    assert got == {
        "coder.scope": 'G(called(Bash) -> arg_paths_within(Bash, "/srv/repo/", "/tmp"))',
        "coder.no_leak": "G !flow(coder, external)",
        "coder.no_rm": "G(called(Bash) -> !arg_has(Bash, rm))",
        "own": "G(called(Bash) -> count(Bash) <= 2)",  # the agent's own contracts too
    }


def test_whole_word_renames_only(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, "sponsio.yaml", """
        agents:
          a:
            tool_rename: {exec: Bash}
            contracts:
              - id: x
                G: {ltl: "G(called(executor) -> !called(exec))"}
    """))  # fmt: skip
    assert cfg.contracts[0].guarantees[0].text == "G(called(executor) -> !called(Bash))"


def test_workspace_placeholder_without_workspace_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "pack.yaml", PACK)
    p = write(tmp_path, "sponsio.yaml", "agents:\n  coder:\n    include: [pack.yaml]\n")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    assert "'coder'" in str(e.value) and "<workspace>/" in str(e.value)
    # the pack on its own loads: it is the including agent that must say where it works
    assert len(load_config(tmp_path / "pack.yaml").contracts) == 3


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("workspace: ''", "workspace"),
        ("tool_rename: [a, b]", "tool_rename"),
        ("tool_rename: {a: a}", "tool_rename.a"),
        ("tool_rename: {a: b, b: a}", "tool_rename"),
    ],
)
def test_bad_rewrites_name_their_path(tmp_path: Path, body: str, where: str) -> None:
    p = write(tmp_path, "s.yaml", f"agents:\n  a:\n    {body}\n    contracts: []\n")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    assert f"agents.a.{where}" in str(e.value)


def test_identical_contracts_get_distinct_ids(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, "sponsio.yaml", """
        agents:
          bot:
            contracts:
              - G: {pattern: idempotent, args: [pay]}
              - G: {pattern: idempotent, args: [pay]}
              - G: {pattern: idempotent, args: [pay]}
    """))  # fmt: skip
    ids = [c.id for c in cfg.contracts]
    assert ids == [ids[0], f"{ids[0]}-2", f"{ids[0]}-3"]


def test_assumption_violations_are_low_severity(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, "sponsio.yaml", """
        agents:
          bot:
            contracts:
              - id: gated
                severity: high
                A: "called `confirm_reconfirmed`"
                G: {pattern: idempotent, args: [pay]}
    """))  # fmt: skip
    log = tmp_path / "20260101_000000_1.jsonl"
    line = {"ts": 1.0, "agent_id": "bot", "action": "pay", "constraint": "x", "result": "allowed"}
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    result = audit([log], cfg)
    (v,) = result.violations.to_pylist()
    assert (v["contract_id"], v["kind"], v["severity"]) == ("gated", "assumption", "low")
    assert result.summary.violations_by_severity["high"] == 0
    result.store.close()
