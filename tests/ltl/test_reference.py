"""The reference evaluator, row by row of SEMANTICS.md §3 and §4.1, worked out by hand.

Traces are written as event specs (``tests.ltl.strategies.trace``): "ab?" is
called(a) true, called(b) unknown, called(c) false; count(a) counts the a's.
"""

from __future__ import annotations

import pytest

from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import Formula
from sponsio_audit.ltl.parse import parse
from sponsio_audit.ltl.reference import Check, Composite, compare, holds, values
from tests.ltl.strategies import COUNT, trace

T, F, U = True, False, None


def p(text: str) -> Formula:
    """Parse with a, b, c standing for called(a), called(b), called(c)."""
    for x in "abc":
        text = text.replace(f"{x}!", f"called({x})")
    return parse(text)


# (formula, trace, value at each position 0..n-1) — each row of the §3 table
ROWS = [
    # atoms and connectives (Kleene)
    ("a!", ("a", "", "a?"), [T, F, U]),
    ("!a!", ("a", "", "a?"), [F, T, U]),
    ("a! & b!", ("ab?", "b?", "a"), [U, F, F]),
    ("a! | b!", ("ab?", "b?", "a"), [T, U, T]),
    ("a! -> b!", ("a?b", "a?", "ab?"), [T, U, U]),
    ("true", ("",), [T]),
    ("false", ("",), [F]),
    # X: weak next, true at the last position
    ("X b!", ("b", "c", "b"), [F, T, T]),
    ("X b!", ("", "b?"), [U, T]),
    # F: some j in [i, n)
    ("F b!", ("a", "b", "a"), [T, T, F]),
    ("F b!", ("b?", "a", "b"), [T, T, T]),
    ("F b!", ("b", "b?", "a"), [T, U, F]),
    # G: every j in [i, n)
    ("G a!", ("a", "a?", "a"), [U, U, T]),
    ("G a!", ("a?", "c", "a"), [F, F, T]),
    # U: strong, ψ must come, φ until then
    ("a! U b!", ("a", "b", "c"), [T, T, F]),
    ("a! U b!", ("a", "a", "a"), [F, F, F]),
    ("a! U b!", ("a?", "b"), [U, T]),
    ("a! U b!", ("a", "c", "b"), [F, F, T]),
    # W: (φ U ψ) ∨ G φ
    ("a! W b!", ("a", "a", "a"), [T, T, T]),
    ("a! W b!", ("a", "c", "b"), [F, F, T]),
    ("a! W b!", ("a", "a?", "a"), [U, U, T]),
    # Y: false at 0
    ("Y a!", ("a", "c", "a?", "c"), [F, T, F, U]),
    # O, H over [0, i]
    ("O a!", ("c", "a?", "a", "c"), [F, U, T, T]),
    ("H a!", ("a", "a?", "c", "a"), [T, U, F, F]),
    # S: some j ≤ i has ψ, φ on (j, i]
    ("a! S b!", ("b", "a", "a", "c", "a"), [T, T, T, F, F]),
    ("a! S b!", ("c", "ab", "a?", "a"), [F, T, U, U]),
    # O[k], H[k] over [max(0, i-k), i]
    ("O[1] a!", ("a", "c", "c", "a"), [T, T, F, T]),
    ("O[0] a!", ("a", "c"), [T, F]),
    ("H[1] a!", ("c", "a", "a", "c"), [F, F, T, F]),
    ("H[2] a!", ("a?", "a", "a", "a"), [U, U, U, T]),
    # F[a,b] over [i+a, min(i+b, n-1)]: clipped at the end, empty past it
    ("F[1,2] b!", ("b", "c", "c", "b", "c"), [F, T, T, F, F]),
    ("F[0,0] b!", ("b", "c"), [T, F]),
    ("F[2,3] b!", ("a", "a"), [F, F]),
    # internal duals: N strong next, R release, Z weak yesterday, T, G[a,b]
    ("N b!", ("a", "b", "c"), [T, F, F]),
    ("a! R b!", ("b", "ab", "c"), [T, T, F]),
    ("a! R b!", ("b", "b", "b"), [T, T, T]),
    ("a! R b!", ("b", "c", "ab"), [F, F, T]),
    ("Z a!", ("c", "a", "c"), [T, F, T]),
    ("a! T b!", ("b", "ab", "b", "c"), [T, T, T, F]),
    ("a! T b!", ("c", "ab", "b"), [F, T, T]),
    ("G[1,2] b!", ("c", "b", "b", "c"), [T, F, F, T]),
]


@pytest.mark.parametrize(("text", "specs", "expected"), ROWS)
def test_table_rows(text: str, specs: tuple[str, ...], expected: list[bool | None]) -> None:
    assert values(p(text), trace(*specs)) == expected


def test_empty_trace() -> None:
    """On the empty trace G φ holds and F φ, U and atoms do not (§3)."""
    assert holds(p("G a!"), []) is True
    assert holds(p("G false"), []) is True
    assert holds(p("F a!"), []) is False
    assert holds(p("F true"), []) is False
    assert holds(p("a! U b!"), []) is False
    assert holds(p("a!"), []) is False
    assert holds(p("true"), []) is True
    assert holds(p("a! W b!"), []) is True
    assert holds(p("X a!"), []) is True


def test_comparisons() -> None:
    tr = trace("a", "c", "a")
    assert values(p("count(a) <= 1"), tr) == [T, T, F]
    assert values(p("2 == count(a)"), tr) == [F, F, T]
    tr[1][COUNT] = None
    assert values(p("count(a) <= 1"), tr) == [T, U, F]
    assert values(p("!(count(a) <= 1)"), tr) == [F, U, T]
    # numbers and strings never equal
    assert compare("==", 1, "1") is False
    assert compare("!=", 1, "1") is True
    assert compare("<=", None, 3) is None


def test_value_comparisons_by_kind() -> None:
    """Value atoms (arg_value, ctx_value) compare as JSON values: different kinds are never
    equal, order exists between two numbers or two strings only (else unknown)."""
    assert compare("==", "pm_1", "pm_1") is True and compare("!=", "pm_1", "pm_2") is True
    assert compare("==", 5, 5.0) is True
    assert compare("==", True, 1) is False  # a bool is not the number 1
    assert compare("!=", True, 1) is True
    assert compare("==", Composite("[1,2]"), Composite("[1,2]")) is True
    assert compare("==", Composite("[1,2]"), "[1,2]") is False  # a list is not its text
    assert compare("<", "a", "b") is True
    assert compare("<", "5000", 10) is None  # no coercion, no guess
    assert compare(">=", Composite("null"), 0) is None
    assert compare("<=", True, True) is None


def test_kleene_rules() -> None:
    """¬u = u; false ∧ u = false; true ∨ u = true; otherwise u (§2)."""
    assert reference.k_not(None) is None
    assert reference.k_and(False, None) is False
    assert reference.k_and(True, None) is None
    assert reference.k_or(True, None) is True
    assert reference.k_or(False, None) is None
    assert reference.k_all([]) is True and reference.k_any([]) is False


# ---------------------------------------------------------------- §4.1


def prefixes(text: str, *specs: str) -> list[bool | None]:
    tr = trace(*specs)
    return [reference.prefix_value(p(text), tr, k) for k in range(len(tr))]


def test_prefix_values_read_the_future_as_open() -> None:
    # G over what exists; bad from the first false
    assert prefixes("G(b! -> O a!)", "c", "b", "a") == [T, F, F]
    # F and U are never bad, however odd
    assert prefixes("F false", "a", "a") == [T, T]
    assert prefixes("a! U b!", "a", "a") == [T, T]
    assert prefixes("a! U b!", "a", "c") == [T, F]
    # X is true at the last position, N too while the future is open
    assert prefixes("X b!", "a", "c") == [T, F]
    assert prefixes("N b!", "a") == [T]
    # F[a,b] is open while its window reaches past the prefix, then closed
    assert prefixes("F[0,1] b!", "c", "c", "b") == [T, F, F]
    assert prefixes("F[1,2] b!", "a", "c", "b") == [T, T, T]
    # unknowns stay unknown
    assert prefixes("G a!", "a?", "a") == [U, U]
    # negation goes through NNF: ¬F b = G ¬b is bad at the first b
    assert prefixes("!F b!", "a", "b", "a") == [T, F, F]
    # ¬X b = N ¬b: fine until b shows up at 1
    assert prefixes("!X b!", "a", "b") == [T, F]


def test_first_bad_prefix() -> None:
    assert reference.first_bad_prefix(p("G !c!"), trace("a", "b", "c", "c")) == 2
    assert reference.first_bad_prefix(p("G(a! -> F b!)"), trace("a", "c")) is None
    assert reference.first_bad_prefix(p("G(a! -> F[1,2] b!)"), trace("a", "c", "c")) == 2


def test_check_kinds_blame_and_offending() -> None:
    # safety: G ψ with ψ past-only lists every offending event
    got = reference.check(p("G(b! -> O a!)"), trace("b", "c", "b", "a", "b"))
    assert got == Check(False, "guarantee", 0, (0, 2))
    # other shapes: only the blame
    got = reference.check(p("G !c! & F a!"), trace("b", "c", "c"))
    assert got == Check(False, "guarantee", 1, (1,))
    # liveness: no bad prefix; blame the last event, opened the first failing ψ
    got = reference.check(p("G(a! -> F b!)"), trace("a", "b", "a", "c"))
    assert got == Check(False, "liveness", 3, (3,), opened=2)
    # liveness that is not a G: no opened
    assert reference.check(p("F b!"), trace("a", "c")) == Check(False, "liveness", 1, (1,))
    # unknown and true verdicts carry nothing else
    assert reference.check(p("G a!"), trace("a?", "a")) == Check(None)
    assert reference.check(p("G a!"), trace("a")) == Check(True)
    # an unknown elsewhere does not hide a certain violation
    assert reference.check(p("G a!"), trace("a?", "c")) == Check(False, "guarantee", 1, (1,))
    # the empty trace: F fails without any event to blame
    assert reference.check(p("F a!"), []) == Check(False, "liveness", None, ())
