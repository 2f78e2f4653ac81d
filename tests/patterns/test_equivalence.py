"""Each §6 pattern agrees with the future-time form of the table on complete traces.

The future forms are written out here by hand (with ``parse`` or AST nodes),
never taken from the library, and both are evaluated with the reference
evaluator on random traces of tool calls over a small alphabet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ltl.ast import Always, And, Atom, Formula, Implies, Next, Not, Or, StrongNext
from sponsio_audit.ltl.parse import parse
from sponsio_audit.ltl.patterns import CORE, PII_REGEXES, build
from sponsio_audit.ltl.reference import holds

from .grounding import Event, ground

TOOLS = ["a", "b", "c", "confirm_a"]


def c(t: str) -> Atom:
    return Atom("called", (t,))


def strong_chain(f: Formula, k: int) -> Formula:
    """f ∧ N(f ∧ N(… f)) with k copies of f: k calls in a row from here."""
    out = f
    for _ in range(k - 1):
        out = And(f, StrongNext(out))
    return out


def cooldown_future(t: str, n: int) -> Formula:
    # G(c(t) → X(¬c(t) ∧ X(¬c(t) ∧ …))), n deep
    inner: Formula = Not(c(t))
    for _ in range(n - 1):
        inner = And(Not(c(t)), Next(inner))
    return Always(Implies(c(t), Next(inner)))


def deadline_future(a: str, b: str, n: int) -> Formula:
    # G(c(a) → N(c(b) ∨ N(c(b) ∨ … N c(b)))): b at one of the next n positions that exist
    inner: Formula = StrongNext(c(b))
    for _ in range(n - 1):
        inner = StrongNext(Or(c(b), inner))
    return Always(Implies(c(a), inner))


def _g_not(f: Formula) -> Formula:
    return Always(Not(f))


NO_PII = parse(
    "G(" + " & ".join(f"!llm_output_contains({_q})" for _q in
                      ['"' + r.replace("\\", "\\\\") + '"' for _, r in PII_REGEXES]) + ")"
)  # fmt: skip

# (pattern, args, future form)
CASES: list[tuple[str, Any, Callable[[], Formula]]] = [
    ("must_precede", ["a", "b"], lambda: parse("(!called(b) U called(a)) | G !called(b)")),
    ("must_confirm", ["a"], lambda: parse("(!called(a) U called(confirm_a)) | G !called(a)")),
    ("always_followed_by", ["a", "b"], lambda: parse("G(called(a) -> F called(b))")),
    ("no_reversal", ["a", "b"], lambda: parse("G(called(a) -> G !called(b))")),
    ("rate_limit", ["a", 2], lambda: parse("G(count(a) <= 2)")),
    ("idempotent", ["a"], lambda: parse("G(count(a) <= 1)")),
    ("bounded_retry", ["a", 0], lambda: parse("G !(called(a) & N called(a))")),
    ("bounded_retry", ["a", 1], lambda: _g_not(strong_chain(c("a"), 3))),
    ("cooldown", ["a", 1], lambda: cooldown_future("a", 1)),
    ("cooldown", ["a", 3], lambda: cooldown_future("a", 3)),
    ("deadline", ["a", "b", 1], lambda: deadline_future("a", "b", 1)),
    ("deadline", ["a", "b", 3], lambda: deadline_future("a", "b", 3)),
    ("workflow_step", ["a", "b"], lambda: parse("G(called(a) -> X called(b))")),
    (
        "mutual_exclusion",
        ["a", "b"],
        lambda: parse("G(called(a) -> G !called(b)) & G(called(b) -> G !called(a))"),
    ),
    (
        "segregation_of_duty",
        ["a", "b"],
        lambda: parse("G(called(a) -> G !called(b)) & G(called(b) -> G !called(a))"),
    ),
    ("tool_allowlist", [["a", "b"]], lambda: parse("G(called_any() -> called(a) | called(b))")),
    ("redirect_to_safe", ["a", "b"], lambda: parse("G !called(a)")),
    ("requires_permission", ["a", "p"], lambda: parse("G(called(a) -> perm(p))")),
    ("no_data_leak", ["x", "y"], lambda: parse("G !flow(x, y)")),
    (
        "arg_blacklist",
        ["a", "f", ["r1", "r2"]],
        lambda: parse("G(called(a) -> !arg_field_has(a, f, r1) & !arg_field_has(a, f, r2))"),
    ),
    (
        "arg_allowlist",
        ["a", "f", ["r1", "r2"]],
        lambda: parse("G(called(a) -> arg_field_has(a, f, r1) | arg_field_has(a, f, r2))"),
    ),
    (
        "scope_limit",
        ["a", ["/w", "/tmp"]],
        lambda: parse('G(called(a) -> arg_paths_within(a, "/w", "/tmp"))'),
    ),
    ("loop_detection", ["a", 2], lambda: _g_not(strong_chain(c("a"), 3))),
    (
        "required_steps",
        ["a", ["b", "c"]],
        lambda: parse("G(called(a) -> F called(b)) & G(called(a) -> F called(c))"),
    ),
    ("token_budget", [3], lambda: parse("G(token_count(total) <= 3)")),
    ("no_pii", None, lambda: NO_PII),
    (
        "prompt_injection_marker",
        [["x+", "y"]],
        lambda: parse('G !llm_input_contains("(?:x+)|(?:y)")'),
    ),
    ("latency_budget", ["a", 500], lambda: parse("G !latency_exceeds(a, 500)")),
]


def decode(raw: bytes) -> list[Event]:
    """One event per byte: the tool is byte % 4, the rest seeds the atoms not modelled."""
    return [{"tool": TOOLS[b % len(TOOLS)], "seed": b // len(TOOLS)} for b in raw]


BUILT = [(name, args, build(name, args).formula, future()) for name, args, future in CASES]


def test_every_core_pattern_has_a_case() -> None:
    assert {name for name, _, _ in CASES} == {s.name for s in CORE}
    assert len(CORE) == 25


# One property per pattern, all checked on each drawn trace (so each gets every example):
# drawing a trace costs more than checking it, and a mismatch names every pattern that fails.
@settings(max_examples=250, deadline=None)
@given(raw=st.binary(max_size=8), perm=st.sampled_from([(), ("p",), ("q",), ("p", "q")]))
def test_patterns_agree_with_future_forms(raw: bytes, perm: tuple[str, ...]) -> None:
    trace = decode(raw)
    wrong = []
    for name, args, ours, theirs in BUILT:
        vals = ground([ours, theirs], trace, perm)
        if holds(ours, vals) != holds(theirs, vals):
            wrong.append(f"{name}{args}")
    assert not wrong, f"disagree on {[e['tool'] for e in trace]}: {wrong}"
