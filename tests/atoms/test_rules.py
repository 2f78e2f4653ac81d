"""One atom spec drives the three groundings: every registered atom has a rule in each."""

from __future__ import annotations

import pytest

from sponsio_audit.atoms import columnar, online, registry
from sponsio_audit.atoms.registry import ATOMS, TOOL, IncompleteGrounding, Rules
from sponsio_audit.guard import ground

TABLES = {"online": online.RULES, "columnar": columnar.RULES}


def test_a_grounding_missing_an_atom_fails_its_check() -> None:
    rules: Rules[object] = Rules("partial")

    def _called() -> None: ...

    rules.rule(_called)
    with pytest.raises(IncompleteGrounding, match=r"partial grounding misses .*called_any"):
        rules.complete()


def test_a_rule_for_an_unregistered_atom_is_refused() -> None:
    def _no_such_atom() -> None: ...

    with pytest.raises(IncompleteGrounding, match="names no registered atom"):
        Rules("x").rule(_no_such_atom)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_registered_atom_has_a_rule(name: str) -> None:
    own = {s.name for s in ATOMS if s.same_as is None}
    assert set(TABLES[name].table) == own


def test_the_guard_has_a_rule_for_every_tool_atom() -> None:
    own = {s.name for s in ATOMS if s.same_as is None and TOOL in s.sources}
    assert set(ground.EMIT.table) == own


def test_called_with_is_grounded_by_arg_has_everywhere() -> None:
    # SEMANTICS §5: called_with(t, re) = called(t) ∧ arg_has(t, re), and arg_has implies called(t)
    assert registry.grounding_name("called_with") == "arg_has"
    for rules in (*TABLES.values(), ground.EMIT):
        assert rules.of("called_with") is rules.of("arg_has")


def test_an_alias_is_grounded_by_its_atom() -> None:
    assert online.RULES.of("llm_said") is online.RULES.of("llm_output_contains")
    assert columnar.RULES.of("prompt_contains") is columnar.RULES.of("llm_input_contains")
