"""The guard's generated code against the references it replaces.

* ``live`` (response shapes ``G(p → F q)``, ``G(p → F[lo,hi] q)``): firing at
  each step equals the prefix value first turning false
  (``reference.prefix_value``), and the verdict at the end equals
  ``reference.check``, unknowns included.
* ``Bank`` in grounding mode (one variant per called tool, shared state):
  the same against the reference on the online grounder's valuations of the
  calls let through, with rollbacks.
* ``ground.ToolGrounder`` against ``atoms.online.Grounder`` on tool calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsio_audit.atoms.online import Grounder
from sponsio_audit.event import Event
from sponsio_audit.guard.bank import Bank, is_safety
from sponsio_audit.guard.ground import ToolGrounder
from sponsio_audit.guard.live import shape
from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import (
    Always,
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
    Not,
    Num,
    Once,
    OnceWithin,
    Or,
    Since,
    Trigger,
    WeakYesterday,
    Yesterday,
)
from sponsio_audit.ltl.reference import Valuation
from tests.atoms.strategies import ALL_ATOMS, ARGS, MAYBE_TEXT, PERMISSIONS, RECORDED_TOOLS
from tests.ltl.strategies import ALL_ATOMS as LTL_ATOMS
from tests.ltl.strategies import COUNT, A, B, C, traces

PROPS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def past(draw: st.DrawFn, leaves: tuple[Formula, ...], depth: int = 2) -> Formula:
    """A random future-free formula over ``leaves``."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(leaves))
    op = draw(st.sampled_from("!YZOHoh&|>ST"))
    a: Formula = draw(past(leaves, depth - 1))
    if op in "&|>ST":
        b: Formula = draw(past(leaves, depth - 1))
        two: dict[str, Callable[[Formula, Formula], Formula]] = {
            "&": And,
            "|": Or,
            ">": Implies,
            "S": Since,
            "T": Trigger,
        }
        return two[op](a, b)
    if op in "oh":
        return (OnceWithin if op == "o" else HistoricallyWithin)(draw(st.integers(0, 3)), a)
    one: dict[str, Callable[[Formula], Formula]] = {
        "!": Not,
        "Y": Yesterday,
        "Z": WeakYesterday,
        "O": Once,
        "H": Historically,
    }
    return one[op](a)


@st.composite
def responses(draw: st.DrawFn, leaves: tuple[Formula, ...]) -> Formula:
    """``G(p → F q)`` / ``G(p → F[lo,hi] q)`` and the ``∨`` / trigger-less spellings."""
    p: Formula = draw(past(leaves, 1))
    q: Formula = draw(past(leaves, 1))
    lo, hi = sorted(draw(st.tuples(st.integers(0, 3), st.integers(0, 3))))
    within: list[Formula] = [Eventually(q), EventuallyWithin(lo, hi, q)]
    fq = draw(st.sampled_from(within))
    bodies: list[Formula] = [Implies(p, fq), Or(p, fq), Or(fq, p), fq]
    body = draw(st.sampled_from(bodies))
    return Always(body)


CMPS = (Cmp("<=", COUNT, Num(1)), Cmp(">", COUNT, Num(2)))
LEAVES = (A, B, C, A, B, *CMPS, Bool(True))


def fires(f: Formula, tr: list[Valuation], k: int) -> bool:
    """The reference's verdict on the event at k: an offending event of a safety
    clause, or where the prefix value first becomes false."""
    if isinstance(f, Always) and is_safety(f):
        return reference.values(f.arg, tr)[k] is False
    now = reference.prefix_value(f, tr, k)
    return now is False and (k == 0 or reference.prefix_value(f, tr, k - 1) is not False)


@PROPS
@given(responses(LEAVES), traces(max_size=14), st.booleans())
def test_response_shapes_match_reference(f: Formula, tr: list[Valuation], typed: bool) -> None:
    assert shape(f) is not None
    known = all(v is not None for e in tr for v in e.values())
    kinds = {A: "b", B: "b", C: "b", COUNT: "i"} if typed and known else None
    index = {a: i for i, a in enumerate(LTL_ATOMS)}
    bank = Bank([f], index, kinds)
    for k, e in enumerate(tr):
        got = bank.step([e[a] for a in LTL_ATOMS])
        assert (got == [0]) == fires(f, tr, k), (k, bank.source)
    assert bank.check(0) == reference.check(f, tr)


# ---------------------------------------------------------------- grounding mode

G_ATOMS = (
    Atom("called", ("a",)),
    Atom("called", ("B",)),
    Atom("called", ("mcp__s__c",)),
    Atom("arg_has", ("a", "x")),
    Atom("output_has", ("b", "^ok")),
    Atom("count", ("a",)),
    Atom("consecutive_count", ("b",)),
)
G_LEAVES = (
    *G_ATOMS[:5],
    Cmp("<=", G_ATOMS[5], Num(1)),
    Cmp(">", G_ATOMS[6], Num(1)),
    Yesterday(G_ATOMS[1]),  # state read as a bool in the variants of other tools
    Once(G_ATOMS[3]),  # state that may be unknown there
)
CALL_TOOLS = ["a", "A", "b", "mcp__s__c", "mcp__t__c", "c", "mcp__x__a", "d"]
CALL = st.tuples(
    st.sampled_from(CALL_TOOLS),
    st.sampled_from([None, None, {}, {"k": "x"}]),
    st.sampled_from([None, "ok", "no"]),
    st.booleans(),  # roll back after this call
)


def clause(leaves: tuple[Formula, ...]) -> st.SearchStrategy[Formula]:
    return st.one_of(past(leaves).map(Always), responses(leaves))


@settings(PROPS, max_examples=400)
@given(st.lists(clause(G_LEAVES), min_size=1, max_size=4), st.lists(CALL, max_size=16))
def test_bank_variants_match_reference(fs: list[Formula], calls: list[Any]) -> None:
    bank = Bank(fs, grounding=(G_ATOMS, None, "bot"))
    online = Grounder(G_ATOMS)
    tr: list[Valuation] = []
    for tool, args, content, undo in calls:
        saved = bank.state.copy()
        got = bank.call(tool, args, content, None)
        tr.append(online.ground(Event("tool_call", tool=tool, args=args, content=content)))
        k = len(tr) - 1
        assert got == [j for j, f in enumerate(fs) if fires(f, tr, k)], (k, tool)
        if undo:
            bank.state = saved
            online.rollback()
            tr.pop()
    for j, f in enumerate(fs):
        if not is_safety(f):
            assert bank.check(j) == reference.check(f, tr)


def run(f: Formula, *calls: tuple[str, Any]) -> tuple[list[list[int]], reference.Check | None]:
    bank = Bank([f], grounding=(G_ATOMS, None, "bot"))
    fired = [bank.call(tool, args, None, None) for tool, args in calls]
    return fired, bank.check(0)


X = Atom("arg_has", ("a", "x"))
CA, CB = G_ATOMS[0], G_ATOMS[1]


def test_a_state_keeps_its_unknown_in_the_variants_of_other_tools() -> None:
    # O arg_has(a, x) is unknown after a call of a without args; a call of d
    # (where arg_has is the constant false) must still read it as unknown
    assert run(Always(Once(X)), ("a", None), ("d", {}))[0] == [[], []]


def test_a_typed_variant_still_discharges_obligations() -> None:
    # at the call of d nothing opens (called(a) is false) but Y called(b) is true
    f = Always(Implies(CA, Eventually(Yesterday(CB))))
    assert run(f, ("a", {}), ("b", {}), ("d", {}))[1] == reference.Check(True)
    # ... and clears a maybe opened where the trigger was unknown
    g = Always(Implies(X, Eventually(Yesterday(CA))))
    assert run(g, ("a", None), ("d", {}))[1] == reference.Check(True)
    assert run(g, ("a", None))[1] == reference.Check(None)


# ---------------------------------------------------------------- the grounder

TOOL_CALL = st.tuples(
    # the guard grounds the calls it is asked about, which name their tool
    # (guard_before(tool: str)); a call with no recorded tool exists only in
    # recorded traces (SEMANTICS.md §5), grounded by the online/columnar groundings
    st.sampled_from([t for t in RECORDED_TOOLS if t is not None]),
    ARGS,
    MAYBE_TEXT,
    st.one_of(st.none(), st.integers(0, 3_000_000)),
    st.booleans(),
)


@PROPS
@given(ALL_ATOMS, PERMISSIONS, st.sampled_from(["a", "b", None]), st.lists(TOOL_CALL, max_size=8))
def test_tool_grounder_matches_online_grounder(
    atoms: tuple[Atom, ...], perms: Any, agent: str | None, calls: list[Any]
) -> None:
    ours = ToolGrounder(atoms, perms, agent)
    online = Grounder(atoms, perms)
    for tool, args, content, dur, undo in calls:
        e = Event("tool_call", tool=tool, args=args, content=content, duration_ns=dur, agent=agent)
        saved = ours.state.copy()
        want = online.ground(e)
        got = ours.ground(e)
        assert got == want and all(type(got[a]) is type(want[a]) for a in want), e
        if undo:
            ours.state = saved
            online.rollback()
