"""Broken configurations: every error names its YAML path and what was expected."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sponsio_audit.config import ConfigError, load_config


def errors(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    p = tmp_path / "sponsio.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    for issue in e.value.errors:
        assert issue.file == p
    return [(i.path, i.message) for i in e.value.errors]


def paths(tmp_path: Path, text: str) -> list[str]:
    return [p for p, _ in errors(tmp_path, text)]


def test_all_errors_of_a_file_are_collected(tmp_path: Path) -> None:
    got = errors(tmp_path, """
        version: "1"
        agents:
          bot:
            contracts:
              - G: {pattern: rate_limit, args: [transfer, lots]}
              - G: {pattern: must_preceed, args: [a, b]}
              - G: {pattern: arg_blacklist, args: [bash, command, ["ok", "a("]]}
              - G: {ltl: "G(called(a) -> )"}
              - G: {ltl: "G(calld(a))"}
              - G: {ltl: "G(count(a, b) <= 1)"}
              - G: {ltl: "G count(a)"}
              - G: {ltl: 'G !arg_has(bash, "[z-a]")'}
                severity: critical
    """)  # fmt: skip
    assert [p for p, _ in got] == [
        "agents.bot.contracts[0].G.args[1]",
        "agents.bot.contracts[1].G.pattern",
        "agents.bot.contracts[2].G.args[2][1]",
        "agents.bot.contracts[3].G.ltl",
        "agents.bot.contracts[4].G.ltl",
        "agents.bot.contracts[5].G.ltl",
        "agents.bot.contracts[6].G.ltl",
        "agents.bot.contracts[7].G.ltl",
        "agents.bot.contracts[7].severity",
    ]
    msgs = [m for _, m in got]
    assert "max_count: expected a whole number, got 'lots'" in msgs[0]
    assert "unknown pattern 'must_preceed'" in msgs[1] and "must_precede" in msgs[1]
    assert "missing )" in msgs[2]
    assert msgs[3].startswith("column 16: expected a formula")  # the ")"
    assert "unknown atom 'calld'" in msgs[4] and "called" in msgs[4]
    assert "atom count takes 1 argument(s) (t: tool), got 2" in msgs[5]
    assert "count is a int atom" in msgs[6]
    assert "invalid character class range" in msgs[7]
    assert "expected one of high, medium, low; got 'critical'" in msgs[8]


def test_error_lines(tmp_path: Path) -> None:
    p = tmp_path / "sponsio.yaml"
    p.write_text("agents:\n  bot:\n    contracts:\n      - G:\n          pattern: nope\n")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    [issue] = e.value.errors
    assert issue.line == 5
    assert str(issue).startswith(f"{p}:5: agents.bot.contracts[0].G.pattern: unknown pattern")


def test_unknown_keys_at_every_level(tmp_path: Path) -> None:
    got = errors(tmp_path, """
        version: "1"
        agnets: {}
        agents:
          bot:
            contract: []
            contracts:
              - G: {pattern: idempotent, args: [a], argz: [b]}
                priority: 3
    """)  # fmt: skip
    assert [p for p, _ in got] == [
        "agnets",
        "agents.bot.contract",
        "agents.bot.contracts[0].priority",
        "agents.bot.contracts[0].G.argz",
    ]
    assert "unknown top-level key 'agnets'; expected one of" in got[0][1]


def test_ignored_keys_are_accepted_and_listed_once(tmp_path: Path) -> None:
    p = tmp_path / "sponsio.yaml"
    p.write_text(textwrap.dedent("""
        version: "1"
        defaults: {mode: enforce}
        runtime: {}
        performance: {}
        extractor: {model: x}
        judge: {fallback_mode: allow}
        tools: [{name: exec, description: shell, params: "command: str"}, read]
        tool_policy: {default: allow}
        agents:
          bot:
            workspace: /srv
            tool_rename: {Bash: exec}
            customized: []
            contracts:
              - G: {pattern: idempotent, args: [a], context_scope: full_trace}
                alpha: 1
                beta: 0.9
                risk_profile: x
                costs: {}
    """))  # fmt: skip
    cfg = load_config(p)
    keys = [e.split(": ", 1)[1] for e in cfg.ignored]
    assert keys == [
        "defaults", "runtime", "performance", "extractor", "judge", "tools", "tool_policy",
        "agents.bot.customized",  # workspace and tool_rename are honoured (test_rewrites.py)
        "agents.bot.contracts[0].alpha", "agents.bot.contracts[0].beta",
        "agents.bot.contracts[0].risk_profile", "agents.bot.contracts[0].costs",
        "agents.bot.contracts[0].G.context_scope",
    ]  # fmt: skip
    assert len(cfg.contracts) == 1


def test_natural_language_is_refused_with_the_accepted_forms(tmp_path: Path) -> None:
    [(path, msg)] = errors(tmp_path, """
        agents:
          bot:
            contracts:
              - G: ["`a` must precede `b`", "never refund more than the order total"]
    """)  # fmt: skip
    assert path == "agents.bot.contracts[0].G[1]"
    assert msg.startswith("natural-language constraints are not supported")
    for form in ("{pattern: NAME", "{ltl:", "`A` must precede `B`", "called `A`"):
        assert form in msg


def test_contract_shape_errors(tmp_path: Path) -> None:
    got = errors(tmp_path, """
        agents:
          bot:
            contracts:
              - desc: no guarantee
              - {G: {pattern: idempotent, args: [a]}, guarantee: {pattern: idempotent, args: [b]}}
              - G: {pattern: idempotent, ltl: "G true"}
              - G: {ltl: "G true", args: [x]}
              - {G: {ltl: "G true"}, activate_at: sometimes}
              - {G: {ltl: "G true"}, strategy: redirect}
              - {G: {ltl: "G true"}, strategy: shout}
              - G: 42
              - just a string
    """)  # fmt: skip
    assert got == [
        ("agents.bot.contracts[0]", "expected G (or guarantee): a constraint or a list of "
                                    "constraints"),
        ("agents.bot.contracts[1].guarantee", "give either G or guarantee, not both"),
        ("agents.bot.contracts[2].G", "expected exactly one of pattern (with args) or ltl"),
        ("agents.bot.contracts[3].G.args", "args belong to a pattern; an ltl formula takes none"),
        ("agents.bot.contracts[4].activate_at", "expected global or first_match, got 'sometimes'"),
        ("agents.bot.contracts[5].safe_tool", "strategy redirect needs safe_tool: the tool to "
                                              "call"),
        ("agents.bot.contracts[6].strategy", "expected one of block, escalate, warn, redirect; "
                                             "got 'shout'"),
        ("agents.bot.contracts[7].G", "expected a constraint: {pattern: NAME, args: [...]}, "
                                      "{ltl: FORMULA} or a backtick phrasing"),
        ("agents.bot.contracts[8]", "expected a mapping with G (or guarantee), optional A, "
                                    "desc, …"),
    ]  # fmt: skip


def test_named_args_errors(tmp_path: Path) -> None:
    got = errors(tmp_path, """
        agents:
          bot:
            contracts:
              - G: {pattern: rate_limit, args: {action: pay, limit: 3}}
              - G: {pattern: rate_limit, args: {action: pay}}
    """)  # fmt: skip
    assert got[0][0] == "agents.bot.contracts[0].G.args.limit"
    assert "unknown argument 'limit'" in got[0][1] and "max_count: int" in got[0][1]
    assert got[1] == (
        "agents.bot.contracts[1].G.args",
        "rate_limit: missing argument 'max_count'; expected (action: tool, max_count: int)",
    )


def test_yaml_and_top_level_errors(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("agents:\n  bot: [unclosed\n")
    with pytest.raises(ConfigError) as e:
        load_config(p)
    [issue] = e.value.errors
    assert issue.message.startswith("invalid YAML") and issue.line is not None
    assert paths(tmp_path, "version: 2\nagents: []\n") == ["version", "agents"]
    assert paths(tmp_path, "- a\n- b\n") == [""]
    with pytest.raises(ConfigError) as e:
        load_config(tmp_path / "missing.yaml")
    assert "cannot read" in e.value.errors[0].message


def test_permissions_and_include_must_be_strings(tmp_path: Path) -> None:
    assert paths(tmp_path, """
        agents:
          bot: {permissions: [1, 2], include: {a: b}}
    """) == ["agents.bot.permissions", "agents.bot.include"]  # fmt: skip


def test_a_key_given_twice_is_an_error_not_a_silent_replacement(tmp_path: Path) -> None:
    """YAML keeps a repeated key's last value without a word: a contract's second ``G:``
    replaced its blacklist with ``G true`` (a contract that can never fail), an agent's
    second entry dropped the first one's contracts. Each repeat is an error at its path."""
    got = errors(tmp_path, """
        version: "1"
        agents:
          bot:
            contracts:
              - id: no-rm
                G: {pattern: arg_blacklist, args: [bash, command, ["rm -rf"]]}
                severity: low
                G: {ltl: "G true"}
          bot:
            contracts:
              - {id: other, G: {ltl: "G true"}}
    """)  # fmt: skip
    assert sorted(p for p, _ in got) == ["agents.bot", "agents.bot.contracts[0].G"]
    assert all("given twice" in m for _, m in got)


def test_numbers_past_2_53_are_errors_at_their_path(tmp_path: Path) -> None:
    """Counters and durations are compared as float64 (exact to 2**53) and windows summed as
    int64: a deadline of 2**63 - 1 wrapped (false violations), larger numbers were a
    traceback mid-scan; ``validate`` accepted both. Now each is an error at its path."""
    got = errors(tmp_path, """
        version: "1"
        agents:
          "*":
            contracts:
              - {id: d1, G: {pattern: deadline, args: [a, b, 99999999999999999999999999999]}}
              - {id: d2, G: {pattern: deadline, args: [a, b, 9223372036854775807]}}
              - {id: d3, G: {pattern: deadline, args: [a, b, 9007199254740992]}}
              - {id: l1, G: {ltl: "G(called(a) -> F[0,99999999999999999999999] called(b))"}}
              - {id: l2, G: {ltl: "G(count(a) <= -99999999999999999999)"}}
    """)  # fmt: skip
    assert [p for p, _ in got] == [
        "agents.*.contracts[0].G.args[2]", "agents.*.contracts[1].G.args[2]",
        "agents.*.contracts[3].G.ltl", "agents.*.contracts[4].G.ltl",
    ]  # fmt: skip
    assert all("at most 9,007,199,254,740,992" in m for _, m in got)
