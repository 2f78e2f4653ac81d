"""Loading sponsio.yaml: every pattern, ltl strings, assumptions, ids, includes, packs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sponsio_audit.config import Config, ConfigError, load_config, load_pack
from sponsio_audit.config.documents import SPONSIO_PACKS_DIR, shipped_packs
from sponsio_audit.ltl.contract import Strategy
from sponsio_audit.ltl.patterns import CORE, JUDGE_SKIP, LOOKAROUND_SKIP
from sponsio_audit.ltl.patterns.sponsio import JUDGE_NAMES

DATA = Path(__file__).parent / "data"


def write(tmp_path: Path, text: str, name: str = "sponsio.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def load(tmp_path: Path, text: str) -> Config:
    return load_config(write(tmp_path, text))


def test_all_patterns_file_loads() -> None:
    cfg = load_config(DATA / "all_patterns.yaml")
    used = {g.pattern for c in cfg.contracts for g in (*c.guarantees, *c.assumptions)}
    assert {s.name for s in CORE} <= used
    assert cfg.skipped == [] and cfg.ignored == []
    assert cfg.agents["bot"].permissions == ("refund_approver",)
    by_id = {c.id: c for c in cfg.contracts}
    assert by_id["order"].severity == "medium" and by_id["counting"].strategy == Strategy("warn")
    assert by_id["redirect"].strategy == Strategy("redirect", "log_refund_request")
    assert by_id["exclusion"].per_agent and not by_id["order"].per_agent
    assert by_id["order"].guarantees[2].desc == "tickets close"
    assert by_id["order"].guarantees[2].liveness
    f = by_id["formulas"]
    assert f.activate_at == "first_match" and f.assumptions[0].text == "F called(login)"
    assert f.guarantees[1].text == "G(called(order) -> F[1,5] called(confirm))"
    a = by_id["assumed"]
    assert [x.text for x in a.assumptions] == ["F called(web_fetch)", "G !called(forbidden)"]
    assert a.guarantees[0].text == "G(called(exec) -> O called(confirm_reconfirmed))"
    assert all(c.agent == "bot" for c in cfg.contracts)


def test_derived_ids_are_stable_and_ignore_key_order(tmp_path: Path) -> None:
    one = load(tmp_path, """
        agents:
          bot:
            contracts:
              - {desc: d, G: {pattern: idempotent, args: [pay]}}
    """)  # fmt: skip
    two = load(tmp_path, """
        agents:
          bot:
            contracts:
              - G: {args: [pay], pattern: idempotent}
                desc: d
    """)  # fmt: skip
    assert one.contracts[0].id == two.contracts[0].id
    assert one.contracts[0].id.startswith("bot.")


def test_duplicate_ids_name_both_paths(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load(tmp_path, """
            agents:
              bot:
                contracts:
                  - {id: x, G: {pattern: idempotent, args: [a]}}
                  - {id: x, G: {pattern: idempotent, args: [b]}}
        """)  # fmt: skip
    [issue] = e.value.errors
    assert issue.path == "agents.bot.contracts[1]"
    assert "duplicate contract id 'x'" in issue.message
    assert "agents.bot.contracts[0]" in issue.message
    assert issue.line == 6


def test_env_interpolation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SA_TOOL", "wire_transfer")
    monkeypatch.delenv("SA_UNSET", raising=False)
    cfg = load(tmp_path, """
        agents:
          bot:
            contracts:
              - id: c
                desc: "limit ${SA_TOOL}"
                G: {pattern: rate_limit, args: ["${SA_TOOL}", "${SA_UNSET:-3}"]}
    """)  # fmt: skip
    c = cfg.contracts[0]
    assert c.description == "limit wire_transfer"
    assert c.guarantees[0].text == "G(called(wire_transfer) -> count(wire_transfer) <= 3)"
    with pytest.raises(ConfigError) as e:
        load(tmp_path, """
            agents:
              bot:
                contracts:
                  - G: {pattern: idempotent, args: ["${SA_UNSET}"]}
        """)  # fmt: skip
    assert [i.path for i in e.value.errors] == ["agents.bot.contracts[0].G.args[0]"]
    assert "SA_UNSET is not set" in e.value.errors[0].message


def test_escaped_dollar_brace_is_kept(tmp_path: Path) -> None:
    cfg = load(tmp_path, r"""
        agents:
          bot:
            contracts:
              - G: {pattern: arg_blacklist, args: [bash, command, ['\${HOME}']]}
    """)  # fmt: skip
    assert cfg.contracts[0].guarantees[0].args[2] == (r"\${HOME}",)


def test_backtick_phrasings(tmp_path: Path) -> None:
    cfg = load(tmp_path, """
        agents:
          bot:
            contracts:
              - G:
                  - "`a` must precede `b`"
                  - "`a` always followed by `b`"
                  - "never call `a` and `b` together"
                  - "`a` at most 3 times"
                  - "tool `a` at most 3 times"
                  - "cooldown of 4 steps between `a`s"
                  - "`a` requires permission `admin`"
                  - '`bash` args must not contain "rm -rf"'
                  - "called `a`"
    """)  # fmt: skip
    texts = [g.text for g in cfg.contracts[0].guarantees]
    assert texts == [
        "G(called(b) -> O called(a))",
        "G(called(a) -> F called(b))",
        "G((called(b) -> !O called(a)) & (called(a) -> !O called(b)))",
        "G(called(a) -> count(a) <= 3)",
        "G(called(a) -> count(a) <= 3)",
        "G(called(a) -> !Y O[3] called(a))",
        "G(called(a) -> perm(admin))",
        'G(called(bash) -> !arg_has(bash, "rm -rf"))',
        "called(a)",
    ]


def test_lookaround_regex_loads_as_skipped(tmp_path: Path) -> None:
    cfg = load(tmp_path, r"""
        agents:
          bot:
            contracts:
              - id: a
                G: {pattern: arg_blacklist, args: [bash, command, ['(?<!\S)rm\s']]}
              - id: b
                G: {ltl: 'G(!arg_field_has(Bash, command, "x(?=y)"))'}
              - id: c
                activate_at: first_match
                A: {ltl: 'F(arg_has(Bash, "(?!z)"))'}
                G: {pattern: idempotent, args: [pay]}
    """)  # fmt: skip
    assert [(cid, r.split(": ", 1)[1]) for cid, r in cfg.skipped] == [
        ("a", LOOKAROUND_SKIP),
        ("b", LOOKAROUND_SKIP),
        ("c", f"assumption skipped: {LOOKAROUND_SKIP}"),
        ("c", LOOKAROUND_SKIP),
    ]
    # an unevaluable assumption makes its guarantees unevaluable too: never a pass
    assert cfg.contract("c").guarantees[0].skipped == f"assumption skipped: {LOOKAROUND_SKIP}"  # type: ignore[union-attr]


def test_ltl_atoms_are_canonicalised(tmp_path: Path) -> None:
    cfg = load(tmp_path, """
        agents:
          bot:
            contracts:
              - G: {ltl: 'G !llm_said("secret") & G !prompt_contains("x")'}
    """)  # fmt: skip
    assert cfg.contracts[0].guarantees[0].text == (
        "G !llm_output_contains(secret) & G !llm_input_contains(x)"
    )


def test_tool_policy_deny_is_an_allowlist(tmp_path: Path) -> None:
    cfg = load(tmp_path, """
        tool_policy: {default: deny, approved: [search, answer]}
        agents: {}
    """)  # fmt: skip
    [c] = cfg.contracts
    assert (c.id, c.agent) == ("tool_policy", "*")
    assert c.guarantees[0].text == "G(called_any() -> called(search) | called(answer))"
    assert cfg.ignored == [f"{tmp_path / 'sponsio.yaml'}: tool_policy"]


def test_multiple_files_merge(tmp_path: Path) -> None:
    text = "agents: {bot: {permissions: [%s], contracts: [{id: %s, G: 'called `a`'}]}}"
    a = write(tmp_path, text % ("x", "one"), "a.yaml")
    b = write(tmp_path, text % ("y", "two"), "b.yaml")
    cfg = load_config([a, b])
    assert [c.id for c in cfg.contracts] == ["one", "two"]
    assert cfg.agents["bot"].permissions == ("x", "y")
    assert cfg.files == [a.resolve(), b.resolve()]


# -------------------------------------------------------------- includes and packs


def test_include_substitutes_the_agent(tmp_path: Path) -> None:
    write(tmp_path, """
        version: "1"
        tools: [exec]
        agents:
          "*":
            contracts:
              - id: leak
                G: {ltl: "G(contains(untrusted) -> !flow(<agent>, external))"}
              - G: {pattern: idempotent, args: [pay]}
    """, "pack.yaml")  # fmt: skip
    cfg = load(tmp_path, """
        agents:
          bot: {include: [pack.yaml]}
          helper: {include: ["./pack.yaml"]}
    """)  # fmt: skip
    ids = [c.id for c in cfg.contracts]
    assert ids[0] == "bot.leak" and ids[2] == "helper.leak"
    assert cfg.contracts[0].guarantees[0].text == ("G(contains(untrusted) -> !flow(bot, external))")
    assert cfg.contracts[2].agent == "helper"
    assert len(set(ids)) == 4
    assert cfg.agents["bot"].includes == ("pack.yaml",)
    assert cfg.ignored == ["pack.yaml: tools", "./pack.yaml: tools"]


def test_include_shipped_packs(tmp_path: Path) -> None:
    cfg = load(tmp_path, """
        agents:
          bot:
            include: ["sponsio:capability/shell", default]
    """)  # fmt: skip
    assert all(c.agent == "bot" for c in cfg.contracts)
    assert "bot.default.dangerous-shell" in {c.id for c in cfg.contracts}
    assert len(cfg.contracts) == len(load_pack("sponsio:capability/shell").contracts) + len(
        load_pack("default").contracts
    )


def test_include_errors(tmp_path: Path) -> None:
    write(tmp_path, "agents: {'*': {include: [loop.yaml]}}", "loop.yaml")
    with pytest.raises(ConfigError) as e:
        load(tmp_path, """
            agents:
              bot:
                include: ["sponsio:capability/nope", no_such_pack, loop.yaml]
        """)  # fmt: skip
    msgs = [(i.path, i.message.split(";")[0]) for i in e.value.errors]
    assert msgs[:2] == [
        ("agents.bot.include[0]", "unknown Sponsio pack 'sponsio:capability/nope'"),
        ("agents.bot.include[1]", "no pack or file named 'no_such_pack'"),
    ]
    assert "include cycle" in e.value.errors[2].message


def test_default_pack() -> None:
    cfg = load_pack("default")
    ids = {c.id for c in cfg.contracts}
    assert {
        "default.dangerous-shell", "default.destructive-sql", "default.secrets-in-args",
        "default.paths-write", "default.paths-read", "default.runaway-loops",
        "default.token-budget", "default.pii-in-output", "default.prompt-injection",
    } == ids  # fmt: skip
    assert all(c.description for c in cfg.contracts) and not cfg.skipped


SPONSIO_PACKS = Path(__file__).resolve().parents[3] / "shared/data/external/sponsio-packs"


def external_packs() -> list[Path]:
    if not SPONSIO_PACKS.is_dir():
        pytest.skip(f"{SPONSIO_PACKS} not found: the shared folder must sit beside the repository")
    return sorted(SPONSIO_PACKS.glob("*.yaml"))


def test_every_sponsio_pack_loads_with_judges_skipped() -> None:
    packs = external_packs()
    assert len(packs) == 17
    judged = 0
    for p in packs:
        cfg = load_config(p)
        for c in cfg.contracts:
            for g in c.guarantees:
                if g.pattern in JUDGE_NAMES:
                    judged += 1
                    assert g.skipped == JUDGE_SKIP
                    assert (c.id, f"G[0] {g.pattern}: {JUDGE_SKIP}") in cfg.skipped
    assert judged == 13


def test_shipped_copies_are_byte_identical() -> None:
    packs = external_packs()
    copies = sorted(SPONSIO_PACKS_DIR.glob("*.yaml"))
    assert [p.name for p in copies] == [p.name for p in packs]
    for src in packs:
        assert (SPONSIO_PACKS_DIR / src.name).read_bytes() == src.read_bytes(), src.name
    names = [n for n, _ in shipped_packs()]
    assert "sponsio:capability/filesystem-strict" in names and "default" in names


def test_openclaw_details() -> None:
    cfg = load_pack("sponsio:incident/openclaw")
    texts = {c.description: c for c in cfg.contracts}
    seg = texts["Install and run are segregated"]
    assert seg.per_agent
    conf = texts["Confirmations cannot be reused — count(confirm) must dominate count(exec)"]
    assert conf.assumptions[0].text == "F called(confirm_reconfirmed)"
    ignored_keys = {e.rsplit(".", 1)[-1] for e in cfg.ignored}
    assert {"beta", "context_scope"} <= ignored_keys
    assert any(e.endswith(": judge") for e in cfg.ignored)
