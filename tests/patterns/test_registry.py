"""The pattern registry: names, argument binding and checks, metadata, round trips."""

from __future__ import annotations

import pytest

from sponsio_audit.ltl.contract import Strategy
from sponsio_audit.ltl.parse import parse, show
from sponsio_audit.ltl.patterns import (
    LIST_KINDS,
    PatternArgError,
    RegexError,
    build,
    compile_regex,
    lookup,
    registry,
)
from sponsio_audit.regexes import is_backtracking

SPONSIO_NAMES = [
    "never_together", "irreversible_once", "audit_after", "dry_run_before_commit",
    "backup_before_destructive", "required_steps_completion", "arg_length_limit",
    "arg_value_range", "duplicate_call_limit", "dangerous_bash_commands", "dangerous_sql_verbs",
    "data_intact", "destructive_action_gate", "untrusted_source_gate", "confirm_after_source",
    "sanitized_before_sink", "approval_freshness", "delegation_depth_limit", "ctx_required",
    "ctx_matches_required", "jailbreak_free", "toxic_free", "harmful", "injection_free",
    "semantic_pii_free", "hallucination_free", "scope_respect",
]  # fmt: skip

SAMPLE_ARGS = {
    "tool": "t", "field": "f", "regex": "x+", "int": 3, "number": 5, "path": "/w",
    "perm": "p", "kind": "total", "key": "k", "value": "v", "agent": "ag", "text": "",
}  # fmt: skip


def sample_args(name: str) -> list[object]:
    spec = lookup(name)
    assert spec is not None
    out: list[object] = []
    for i, p in enumerate(spec.params):
        if not p.required:
            break
        base = SAMPLE_ARGS[LIST_KINDS.get(p.kind, p.kind)]
        if isinstance(base, str) and p.kind in ("tool", "tools"):
            base = f"t{i}"
        out.append([base] if p.is_list else base)
    if name == "arg_value_range":  # both bounds are optional, but one is needed
        out += [0, 10]
    return out


def test_every_sponsio_name_resolves() -> None:
    for name in SPONSIO_NAMES:
        assert lookup(name) is not None, name


@pytest.mark.parametrize("name", sorted(registry()))
def test_each_pattern_builds_round_trips_and_describes_itself(name: str) -> None:
    spec = registry()[name]
    assert spec.description and "\n" not in spec.description
    res = spec.build(sample_args(name))
    assert parse(show(res.formula)) == res.formula
    assert build(name, res.yaml_args()).formula == res.formula  # YAML round trip
    clause = res.clause(source="s")
    assert (clause.pattern, clause.source, clause.liveness) == (name, "s", spec.liveness)


def test_args_positional_named_flattened_and_scalar() -> None:
    a = build("arg_blacklist", ["exec", "command", ["r1", "r2"]]).formula
    assert build("arg_blacklist", ["exec", "command", "r1", "r2"]).formula == a
    named = {"tool": "exec", "param": "command", "patterns": ["r1", "r2"]}
    assert build("arg_blacklist", named).formula == a
    assert build("idempotent", "x").formula == build("idempotent", ["x"]).formula
    assert (
        build("tool_allowlist", ["a", "b"]).formula == build("tool_allowlist", [["a", "b"]]).formula
    )
    assert build("required_steps_completion", ["t", ["s"]]).args == ("t", ("s",))


@pytest.mark.parametrize(
    ("name", "args", "where", "text"),
    [
        ("rate_limit", ["a", "many"], (1,), "expected a whole number"),
        ("rate_limit", ["a", -1], (1,), "≥ 0"),
        ("cooldown", ["a", 0], (1,), "≥ 1"),
        ("rate_limit", ["a"], (), "missing argument 'max_count'"),
        ("rate_limit", ["a", 1, 2], (), "at most 2"),
        ("must_precede", {"before": "a", "later": "b"}, ("later",), "unknown argument"),
        ("arg_blacklist", ["t", "f", ["ok", "a("]], (2, 1), "missing )"),
        ("arg_blacklist", ["t", "f", []], (2,), "at least one"),
        ("must_precede", [["a"], "b"], (0,), "single tool"),
        ("token_budget", [10, "bytes"], (1,), "input, output, total"),
    ],
)
def test_bad_arguments_say_where(name: str, args: object, where: tuple[object, ...],
                                 text: str) -> None:  # fmt: skip
    with pytest.raises(PatternArgError) as e:
        build(name, args)
    assert e.value.where == where
    assert text in e.value.message


def test_lookaround_runs_on_the_backtracking_engine_other_regex_errors_are_errors() -> None:
    """SEMANTICS.md §5: lookaround and backreferences run (backtracking engine, time limit)."""
    res = build("arg_blacklist", ["t", "f", [r"(?<!\S)rm"]])
    assert res.skipped is None
    for rx in [r"(?=x)", r"(?!x)", r"(?<=x)", r"(?<!x)", r"(a)\1", r"(?P<n>a)(?P=n)"]:
        assert is_backtracking(compile_regex(rx)), rx
    assert not is_backtracking(compile_regex(r"rm\s+-rf"))  # RE2 for everything it can run
    for rx in [r"a(", r"[z-a]", r"a{2,1001}", r"\Z"]:
        with pytest.raises(RegexError) as e:
            compile_regex(rx)
        assert not e.value.lookaround, rx
    with pytest.raises(RegexError, match="the backtracking engine"):
        compile_regex(r"(?<=x)(")  # neither engine compiles it


def test_strategy_and_per_agent_metadata() -> None:
    res = build("redirect_to_safe", ["refund", "log_refund"])
    assert res.strategy == Strategy("redirect", "log_refund")
    assert build("segregation_of_duty", ["a", "b"]).per_agent
    assert not build("mutual_exclusion", ["a", "b"]).per_agent
    assert build("always_followed_by", ["a", "b"]).liveness
    assert build("deadline", ["a", "b", 2]).liveness


def test_shipped_lists_are_sponsios_and_compile() -> None:
    f = show(build("dangerous_bash_commands").formula)
    assert r"(?=\\s|$)" in f and '"> /app"' in f and "tee /app" in f  # Sponsio 0.2.0a21's
    assert '"rm -rf"' in show(build("dangerous_bash_commands", [["rm -rf"]]).formula)
    sql = show(build("dangerous_sql_verbs").formula)
    assert r"(?i)\\bDROP\\b" in sql and "execute_sql" in sql
    pii = build("no_pii").formula
    assert show(pii).count("llm_output_contains") == 4
