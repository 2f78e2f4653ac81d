"""The incremental monitor against the reference (properties) and against SEMANTICS.md (by hand)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import Always, Eventually, Formula, Next, Not, Once
from sponsio_audit.ltl.monitor import Monitor, monitor_check
from sponsio_audit.ltl.parse import parse
from sponsio_audit.ltl.reference import Check, Trace, Valuation
from tests.ltl.strategies import A, B, C, any_formulas, patterns, trace, traces, valuations

PROPS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(f: Formula, tr: Trace) -> tuple[list[reference.K], Check]:
    m = Monitor(f)
    values = [m.step(e) for e in tr]
    return values, m.finish()


# ---------------------------------------------------------------- properties


@PROPS
@given(any_formulas(), traces())
def test_verdict_matches_reference(f: Formula, tr: list[Valuation]) -> None:
    """Value, kind, blame, offending events and opened, for every formula."""
    assert monitor_check(f, tr) == reference.check(f, tr)


@settings(PROPS, max_examples=200)
@given(patterns(), traces())
def test_pattern_verdicts_match_reference(f: Formula, tr: list[Valuation]) -> None:
    """G ψ shapes: offending lists and the liveness ``opened`` position."""
    assert monitor_check(f, tr) == reference.check(f, tr)


@settings(PROPS, max_examples=200)
@given(any_formulas(), traces(max_size=20))
def test_prefix_values_match_reference(f: Formula, tr: list[Valuation]) -> None:
    m = Monitor(f)
    expected_bad = None
    for k, e in enumerate(tr):
        want = reference.prefix_value(f, tr, k)
        assert m.step(e) == want, k
        if want is False and expected_bad is None:
            expected_bad = k
        assert (m.position, m.value, m.first_bad) == (k + 1, want, expected_bad)


@PROPS
@given(any_formulas(), traces(max_size=20), valuations(), st.data())
def test_rollback_is_as_if_never_stepped(
    f: Formula, tr: list[Valuation], extra: Valuation, data: st.DataObject
) -> None:
    j = data.draw(st.integers(0, len(tr)), label="insert at")
    plain, rolled = Monitor(f), Monitor(f)
    for e in tr[:j]:
        plain.step(e)
        rolled.step(e)
    rolled.step(extra)
    rolled.rollback()
    assert (rolled.position, rolled.value, rolled.first_bad) == (
        plain.position,
        plain.value,
        plain.first_bad,
    )
    for e in tr[j:]:
        assert rolled.step(e) == plain.step(e)
        assert rolled.first_bad == plain.first_bad
    assert rolled.finish() == plain.finish()


# ---------------------------------------------------------------- by hand

a, b, c = A, B, C


def both(f: Formula, tr: Trace) -> Check:
    """The monitor's verdict, after checking that the reference gives the same."""
    got = monitor_check(f, tr)
    assert got == reference.check(f, tr)
    return got


def test_must_precede_lists_every_offending_event() -> None:
    f = Always(parse("called(b) -> O called(a)"))
    # b at 1 and 3 before any a; the b at 5 comes after the a at 4
    tr = trace("c", "b", "", "b", "a", "b")
    values, check = run(f, tr)
    assert values == [True, False, False, False, False, False]
    assert check == Check(False, "guarantee", 1, (1, 3))


def test_unknowns_make_g_unverifiable_but_a_false_still_violates() -> None:
    f = parse("G(called(b) -> O called(a))")
    # b unknown at 0 with no a before: ψ(0) = ¬u ∨ false = u
    assert both(f, trace("b?", "c")) == Check(None)
    values, _ = run(f, trace("b?", "c"))
    assert values == [None, None]
    # ... but the certain violation at 2 is still a violation, blamed there
    tr = trace("b?", "c", "b", "a", "b")
    values, check = run(f, tr)
    assert values == [None, None, False, False, False]
    assert check == Check(False, "guarantee", 2, (2,))


def test_always_followed_by_is_liveness_with_opened() -> None:
    f = parse("G(called(a) -> F called(b))")
    # the a at 0 is answered by the b at 2; the a at 3 never is
    tr = trace("a", "c", "b", "a", "c")
    values, check = run(f, tr)
    assert values == [True] * 5  # an open F never makes a prefix bad
    assert check == Check(False, "liveness", 4, (4,), opened=3)
    # the obligation opened first is the one reported
    assert both(f, trace("c", "a", "a", "c")) == Check(False, "liveness", 3, (3,), opened=1)
    # an unknown b may answer it: unverifiable, not violated
    assert both(f, trace("a", "b?")) == Check(None)
    assert both(f, trace("a", "c", "b")) == Check(True)


def test_eventually_within_window() -> None:
    f = parse("F[1,2] called(b)")
    assert both(f, trace("a", "c", "b")) == Check(True)
    # window [1,2] holds no b: bad once the window is complete (k = 2)
    values, check = run(f, trace("a", "c", "c", "b"))
    assert values == [True, True, False, False]
    assert check == Check(False, "guarantee", 2, (2,))
    # the trace ends inside the window: clipped to [1,1], false, never bad
    assert both(f, trace("a", "c")) == Check(False, "liveness", 1, (1,))
    assert both(f, trace("a")) == Check(False, "liveness", 0, (0,))


def test_deadline_pattern() -> None:
    f = parse("G(called(a) -> F[1,2] called(b))")
    # a at 0, no b at 1 or 2: blamed at the 2nd step after a
    assert both(f, trace("a", "c", "c", "b")) == Check(False, "guarantee", 2, (2,))
    # a at 1 and the trace ends before its window closes: liveness, opened at 1
    assert both(f, trace("c", "a", "c")) == Check(False, "liveness", 2, (2,), opened=1)
    assert both(f, trace("a", "c", "b")) == Check(True)


def test_next_is_weak_at_the_end() -> None:
    assert both(Next(b), trace("a")) == Check(True)
    assert both(parse("G(called(a) -> X called(b))"), trace("c", "a")) == Check(True)
    values, check = run(Next(b), trace("a", "c"))
    assert values == [True, False]
    assert check == Check(False, "guarantee", 1, (1,))
    # strong next (an internal dual) is false at the last position, but no prefix is bad
    assert both(parse("N called(b)"), trace("a")) == Check(False, "liveness", 0, (0,))


def test_workflow_step_and_cooldown() -> None:
    workflow = parse("G(Y called(a) -> called(b))")
    assert both(workflow, trace("a", "b", "a")) == Check(True)
    assert both(workflow, trace("a", "c", "a", "b")) == Check(False, "guarantee", 1, (1,))
    cooldown = parse("G(called(a) -> !Y O[1] called(a))")  # no a within 2 steps of an a
    assert both(cooldown, trace("a", "c", "a", "a", "c", "c", "a")) == Check(
        False, "guarantee", 2, (2, 3)
    )


def test_odd_formulas() -> None:
    # F false: every prefix is fine (open future), the complete trace is not
    values, check = run(Eventually(parse("false")), trace("a", "a"))
    assert values == [True, True]
    assert check == Check(False, "liveness", 1, (1,))
    # G F on a finite trace: the last position must have it
    assert both(parse("G F called(a)"), trace("a", "c")) == Check(False, "liveness", 1, (1,), 1)
    # a past operator over a future one: O X b at 1 holds because X b held at 0
    assert both(Once(Next(b)), trace("a", "b")) == Check(True)


def test_empty_trace() -> None:
    assert monitor_check(Always(a), []) == Check(True)
    assert monitor_check(Eventually(a), []) == Check(False, "liveness", None, ())
    assert monitor_check(parse("called(a) U called(b)"), []).value is False
    assert monitor_check(parse("called(a) W called(b)"), []).value is True
    assert monitor_check(a, []).value is False
    assert monitor_check(Not(a), []).value is True
    assert monitor_check(parse("H true"), []).value is True
    assert Monitor(a).value is True and Monitor(a).position == 0


def test_rollback_by_hand() -> None:
    m = Monitor(parse("G !called(c)"))
    assert m.step(trace("a")[0]) is True
    assert m.step(trace("c")[0]) is False
    assert m.first_bad == 1
    m.rollback()
    assert (m.position, m.value, m.first_bad) == (1, True, None)
    with pytest.raises(RuntimeError):
        m.rollback()
    assert m.step(trace("b")[0]) is True
    assert m.finish() == Check(True)


def test_bad_windows_are_rejected() -> None:
    from sponsio_audit.ltl.ast import EventuallyWithin, OnceWithin

    with pytest.raises(ValueError):
        Monitor(EventuallyWithin(3, 1, a))
    with pytest.raises(ValueError):
        Monitor(OnceWithin(-1, a))


def test_state_stays_flat_on_long_traces() -> None:
    """Unknowns and repeated triggers must not grow the residuals."""
    f = parse("G((called(a) -> F called(b)) & (called(c) -> F[1,3] called(b)))")
    m = Monitor(f)
    for i in range(2000):
        m.step(trace(["a", "cb?", "c", "b?", "ac"][i % 5])[0])
    st_ = m._state
    assert len(st_.pending) <= 8
    assert not isinstance(st_.top, frozenset) or len(st_.top) <= 8
