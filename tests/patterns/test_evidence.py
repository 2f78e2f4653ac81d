"""Evidence sentences live in the pattern rows: every violable name has one, aliases inherit."""

from __future__ import annotations

from typing import Any

import pytest

from sponsio_audit.ltl.contract import Contract
from sponsio_audit.ltl.patterns import build, describe, registry

from .grounding import tools
from .test_examples import verdict

VIOLABLE = sorted(name for name, spec in registry().items() if not spec.judge)


@pytest.mark.parametrize("name", VIOLABLE)
def test_every_violable_pattern_has_its_own_sentence(name: str) -> None:
    assert registry()[name].evidence is not None, f"{name} falls back to the generic sentence"


def _sentence(name: str, args: Any, tool: str = "t", seq: int = 4) -> str:
    r = build(name, args)
    return describe(Contract("c", "*", (r.clause(),)), 0, "guarantee", seq=seq, tool=tool)


@pytest.mark.parametrize(
    ("alias", "target", "args"),
    [
        ("never_together", "mutual_exclusion", ["a", "b"]),
        ("irreversible_once", "idempotent", ["pay"]),
        ("dry_run_before_commit", "must_precede", ["plan", "apply"]),
        ("backup_before_destructive", "must_precede", ["backup", "drop"]),
    ],
)
def test_an_alias_reads_like_its_target(alias: str, target: str, args: list[str]) -> None:
    assert _sentence(alias, args) == _sentence(target, args)


def test_sponsio_name_sentence_says_what_happened_at_the_blamed_step() -> None:
    # t is called after src with no confirm_t in between: blamed at position 2 (§6.1)
    v = verdict("confirm_after_source", ["src", "t"], tools("t", "src", "t"))
    assert (v.verdict, v.blame) == ("violated", 2)
    text = _sentence("confirm_after_source", ["src", "t"], tool="t", seq=2)
    assert text == "t called at step 2 after src without a confirm_t since"


def test_value_range_sentence_names_the_missing_bound() -> None:
    assert _sentence("arg_value_range", ["pay", "amount", None, 100]).endswith("amount above 100")
    assert _sentence("arg_value_range", ["pay", "amount", 1, None]).endswith("amount below 1")
    assert _sentence("arg_value_range", ["pay", "amount", 1, 9]).endswith("outside [1, 9]")


def test_untrusted_tool_name_cannot_inject_control_characters() -> None:
    text = _sentence("delegation_depth_limit", [2], tool="x\x1b[2J\u202e")
    assert text == "delegation chain deeper than 2 at step 4"
    text = _sentence("approval_freshness", ["ok", "pay", 3], tool="pay\x07\u2066")
    assert text == "pay called at step 4 without ok in the last 3 steps"
