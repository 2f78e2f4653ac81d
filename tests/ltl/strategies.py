"""Hypothesis strategies shared by the LTL tests: random formulas and grounded traces.

Formulas use the bool atoms ``called(a|b|c)``, comparisons on the int atom
``count(a)`` (and a string comparison now and then), and every operator of
SEMANTICS.md §3 with small bounds; ``duals=True`` adds the internal NNF
duals (N R Z T G[a,b]). Traces are lists of valuations (Atom -> value) of
length 0..30 with unknowns (None) sprinkled in.
"""

from __future__ import annotations

import functools
import itertools
from types import MappingProxyType

from hypothesis import strategies as st

from sponsio_audit.ltl.ast import (
    CMP_OPS,
    Always,
    AlwaysWithin,
    And,
    Atom,
    Bool,
    Cmp,
    Eventually,
    EventuallyWithin,
    Formula,
    Historically,
    HistoricallyWithin,
    Implies,
    Next,
    Not,
    Num,
    Once,
    OnceWithin,
    Or,
    Release,
    Since,
    Str,
    StrongNext,
    Trigger,
    Until,
    WeakUntil,
    WeakYesterday,
    Yesterday,
)
from sponsio_audit.ltl.reference import Valuation, Value

A = Atom("called", ("a",))
B = Atom("called", ("b",))
C = Atom("called", ("c",))
COUNT = Atom("count", ("a",))
BOOL_ATOMS = (A, B, C)
ALL_ATOMS = (A, B, C, COUNT)

UNARY = (Not, Next, Eventually, Always, Yesterday, Once, Historically)
BINARY = (And, Or, Implies, Until, WeakUntil, Since)
DUAL_UNARY = (StrongNext, WeakYesterday)
DUAL_BINARY = (Release, Trigger)


COMPARISONS: tuple[Formula, ...] = (
    *(Cmp(op, COUNT, Num(n)) for op in CMP_OPS for n in range(5)),
    *(Cmp(op, Num(n), COUNT) for op in CMP_OPS for n in range(5)),
    Cmp("==", COUNT, Str("x")),  # a number never equals a string
    Cmp("!=", COUNT, Str("x")),
)
_LEAF_KIND = st.sampled_from(("atom", "atom", "atom", "cmp", "const"))
_ATOM = st.sampled_from(BOOL_ATOMS)
_CMP = st.sampled_from(COMPARISONS)
_CONST = st.sampled_from((Bool(True), Bool(False)))
_BOUND = st.integers(0, 3)


def comparisons() -> st.SearchStrategy[Formula]:
    """``count(a) op n``, ``n op count(a)``, or a string comparison."""
    return _CMP


def leaves() -> st.SearchStrategy[Formula]:
    """Atoms (most of the time), comparisons and the two constants."""
    return st.one_of(_ATOM, _ATOM, _ATOM, _CMP, _CONST)


@st.composite
def _formula(draw: st.DrawFn, size: int, duals: bool) -> Formula:
    """A random formula of at most ``size`` nodes (a leaf when size is 1)."""
    if size <= 1 or draw(st.integers(0, 4)) == 0:
        kind = draw(_LEAF_KIND)
        return draw(_ATOM if kind == "atom" else _CMP if kind == "cmp" else _CONST)
    unary = UNARY + DUAL_UNARY if duals else UNARY
    binary = BINARY + DUAL_BINARY if duals else BINARY
    bounded = ("O[k]", "H[k]", "F[a,b]", "G[a,b]") if duals else ("O[k]", "H[k]", "F[a,b]")
    shapes: list[object] = [*unary, *bounded, *(binary if size >= 3 else ())]
    shape = draw(st.sampled_from(shapes))
    if shape in binary:
        left = draw(st.integers(1, size - 2))
        return shape(draw(_formula(left, duals)), draw(_formula(size - 1 - left, duals)))  # type: ignore[operator]
    arg = draw(_formula(size - 1, duals))
    if shape in unary:
        return shape(arg)  # type: ignore[operator]
    lo, hi = sorted((draw(_BOUND), draw(_BOUND)))
    match shape:
        case "O[k]":
            return OnceWithin(hi, arg)
        case "H[k]":
            return HistoricallyWithin(hi, arg)
        case "F[a,b]":
            return EventuallyWithin(lo, hi, arg)
    return AlwaysWithin(lo, hi, arg)


def formulas(max_nodes: int = 12, duals: bool = False) -> st.SearchStrategy[Formula]:
    """Random formulas over every §3 operator (and the NNF duals with ``duals``)."""
    return st.integers(1, max_nodes).flatmap(lambda n: _formula(n, duals))


def patterns() -> st.SearchStrategy[Formula]:
    """``G ψ`` shapes of the pattern library, with random triggers and conditions."""
    lit = st.one_of(st.sampled_from(BOOL_ATOMS), st.sampled_from(BOOL_ATOMS).map(Not))
    small = formulas(max_nodes=5)
    k = st.integers(0, 3)
    window = st.tuples(st.integers(0, 3), st.integers(0, 3)).map(sorted)
    body = st.one_of(
        st.builds(lambda p, q: Implies(p, Once(q)), lit, lit),
        st.builds(lambda p, q: Implies(p, Eventually(q)), lit, lit),
        st.builds(lambda p, w, q: Implies(p, EventuallyWithin(w[0], w[1], q)), lit, window, lit),
        st.builds(lambda p, q: Implies(p, Not(Once(q))), lit, lit),
        st.builds(lambda p, n, q: Implies(p, Not(Yesterday(OnceWithin(n, q)))), lit, k, lit),
        st.builds(lambda p, q: Implies(Yesterday(p), q), lit, lit),
        st.builds(lambda p, q: Implies(p, Next(q)), lit, lit),
        st.builds(lambda p, n: Implies(p, Cmp("<=", COUNT, Num(n))), lit, st.integers(0, 3)),
        st.builds(lambda p, q, r: Implies(p, Since(Not(q), r)), lit, lit, lit),
        st.builds(Implies, small, small),
        small,
    )
    return st.builds(Always, body)


def any_formulas(duals: bool = True) -> st.SearchStrategy[Formula]:
    """Random formulas, with pattern-shaped ``G ψ`` a quarter of the time."""
    return st.one_of(
        formulas(duals=duals), formulas(duals=duals), formulas(duals=duals), patterns()
    )


@functools.cache
def _events(unknown: float) -> tuple[Valuation, ...]:
    """Every event over ALL_ATOMS, unknowns repeated so about ``unknown`` of values are None.

    Drawing one of these is a single choice, much cheaper for hypothesis than
    one draw per atom; the all-false event comes first so that it shrinks there.
    """
    reps = 0 if unknown <= 0 else max(1, round((1 - unknown) / unknown / 2))
    bools: list[bool | None] = [False, True] * max(1, reps) + ([None] if reps else [])
    counts: list[int | None] = list(range(5)) * max(1, reps) + ([None] if reps else [])
    out = []
    for x, y, z, n in itertools.product(bools, bools, bools, counts):
        out.append(MappingProxyType({A: x, B: y, C: z, COUNT: n}))
    return tuple(out)


@functools.cache
def valuations(unknown: float = 0.15) -> st.SearchStrategy[Valuation]:
    """One grounded event (read-only): atoms true/false, count(a) in 0..4, or None."""
    return st.sampled_from(_events(unknown))


_RATES = (0.0, 0.1, 0.3)


@st.composite
def _traces(draw: st.DrawFn, max_size: int, unknown: float | None) -> list[Valuation]:
    rate = draw(st.sampled_from(_RATES)) if unknown is None else unknown
    events = valuations(rate)
    return [draw(events) for _ in range(draw(st.integers(0, max_size)))]


def traces(max_size: int = 30, unknown: float | None = None) -> st.SearchStrategy[list[Valuation]]:
    """Grounded traces, length spread evenly over 0..max_size; by default a third
    are fully known and the rest have about 10% or 30% unknowns."""
    return _traces(max_size, unknown)


# ---------------------------------------------------------------- hand-written traces


def event(spec: str, count: int = 0) -> dict[Atom, Value]:
    """An event from a spec like ``"ab?"``: called(a) true, called(b) unknown, the rest false."""
    out: dict[Atom, Value] = {atom: False for atom in BOOL_ATOMS}
    out[COUNT] = count
    for i, ch in enumerate(spec):
        if ch in "abc":
            unknown = spec[i + 1 : i + 2] == "?"
            out[Atom("called", (ch,))] = None if unknown else True
    return out


def trace(*specs: str) -> list[dict[Atom, Value]]:
    """Events from specs (see ``event``); count(a) counts the calls of a so far."""
    out: list[dict[Atom, Value]] = []
    n = 0
    for spec in specs:
        e = event(spec)
        n += e[A] is True
        e[COUNT] = n
        out.append(e)
    return out
