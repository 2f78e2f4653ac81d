"""The guard against the reference audit on random contracts and random tool-call sequences.

Enforce mode: the guard blocks exactly the events where an audit of the events
it let through plus that event blames a fresh guarantee (or assumption)
violation on it (SEMANTICS.md §4.2). Observe mode: its would-be decisions are
exactly the audit's offending events (every prefix is audited; for contracts
without assumptions this equals the audit of the whole trace).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.guard import Guard
from sponsio_audit.ltl.contract import Contract, judge

from .helpers import contract, decision_keys, fresh_offences, ground_tools, offences

TOOLS = ("a", "b", "c", "d")


@st.composite
def past(draw: st.DrawFn, depth: int = 2) -> str:
    """A random future-free formula over called(a/b/c) and count(a|b) <= k."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return f"called({draw(st.sampled_from('abc'))})"
        return f"count({draw(st.sampled_from('ab'))}) <= {draw(st.integers(0, 3))}"
    op = draw(st.sampled_from(["!", "O", "Y", "H", "O[k]", "H[k]", "&", "|", "S"]))
    p = draw(past(depth - 1))
    if op in ("&", "|", "S"):
        q = draw(past(depth - 1))
        return f"({p}) {op} ({q})"
    if op.endswith("[k]"):
        return f"{op[0]}[{draw(st.integers(0, 3))}]({p})"
    return f"{op}({p})"


@st.composite
def guarantee(draw: st.DrawFn) -> str:
    x, y, z = (draw(st.sampled_from("abc")) for _ in range(3))
    shape = draw(st.integers(0, 9))
    if shape <= 5:
        return f"G(called({x}) -> {draw(past())})"
    if shape == 6:
        return f"G({draw(past())})"
    return draw(
        st.sampled_from(
            [
                f"G(called({x}) -> F called({y}))",
                f"G(called({x}) -> F[1,{draw(st.integers(1, 3))}] called({y}))",
                f"G(called({x}) -> X !called({y}))",
                f"!called({x}) U called({y})",
                f"!called({x}) W called({y})",
                f"F called({z})",
                f"G(called({x}) -> (!called({y}) U called({z})))",
            ]
        )
    )


@st.composite
def contracts(draw: st.DrawFn) -> list[Contract]:
    out = []
    for i in range(draw(st.integers(1, 3))):
        gs = draw(st.lists(guarantee(), min_size=1, max_size=2))
        kind = draw(st.sampled_from(["plain", "plain", "global", "first_match"]))
        if kind == "global":
            a = f"G(called(d) -> {draw(past(1))})"
            out.append(contract(f"c{i}", *gs, assumptions=[a]))
        elif kind == "first_match":
            a = draw(st.sampled_from(["called(c)", "O called(b)", "count(a) <= 0"]))
            out.append(contract(f"c{i}", *gs, assumptions=[a], activate_at="first_match"))
        else:
            out.append(contract(f"c{i}", *gs))
    return out


calls = st.lists(st.sampled_from(TOOLS), max_size=12)


@settings(max_examples=250, deadline=None)
@given(contracts(), calls)
def test_enforce_blocks_exactly_fresh_violations(cs: list[Contract], tools: list[str]) -> None:
    g = Guard(cs, "bot", session_log=False, exporter=False)
    through: list[str] = []
    for t in tools:
        d = g.guard_before(t, {})
        want = set().union(*(fresh_offences(c, [*through, t]) for c in cs))
        assert (d.action == "blocked") == bool(want), (through, t, d, want)
        assert decision_keys(d) == want
        if d.allowed:
            through.append(t)
    assert g.position == len(through)


@settings(max_examples=250, deadline=None)
@given(contracts(), calls)
def test_observe_records_the_audits_offending_events(cs: list[Contract], tools: list[str]) -> None:
    g = Guard(cs, "bot", mode="observe", session_log=False, exporter=False)
    got: set[tuple[str, str, str, int]] = set()
    for i, t in enumerate(tools):
        d = g.guard_before(t, {})
        assert d.allowed and d.position == i
        want = set().union(*(fresh_offences(c, tools[: i + 1]) for c in cs))
        assert decision_keys(d) == want
        assert (d.action == "observed") == bool(want)
        assert (d.would_have == "blocked") == bool(want)
        got |= {(*k, i) for k in decision_keys(d)}
    ends = g.finish()
    assert {(v.contract_id, v.guarantee) for d in ends for v in d.violations} == {
        (c.id, v.text) for c in cs for v in judge(c, ground_tools(tools, c.atoms()))
        if v.verdict == "violated" and v.kind == "liveness"
    }  # fmt: skip
    plain = [c for c in cs if not c.assumptions]
    whole = set().union(*(offences(c, tools) for c in plain)) if plain else set()
    assert {k for k in got if k[0] in {c.id for c in plain}} == whole
