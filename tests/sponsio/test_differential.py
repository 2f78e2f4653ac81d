"""Our verdicts equal Sponsio's (``TraceVerifier.check_contract``) on random pairs.

Random traces × random contracts (the pattern library, and A/G contracts
with random assumptions and guarantees in both activation modes): for every
(trace, contract) pair the outcome of both our engines equals the outcome
Sponsio 0.2.0a21 gives. The traces record every fact, so the documented
divergences (a missing fact, a non-numeric ``arg_numeric`` value) do not
arise here; test_divergences.py shows each of them. The pattern traces also
have LLM turns between tool calls (outside a tool contract's view, §1).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from . import oracle
from .specs import (
    PATTERN_NAMES,
    PERMS,
    POSITIONAL,
    llm_traces,
    pattern_calls,
    pattern_spec,
    specs,
    traces,
    value_specs,
    value_traces,
)

# no shrinking: a batch is large and the failure message already names the one pair
SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


def compare(batch: list[Any], contracts: list[Any], perms: frozenset[str]) -> None:
    ours = oracle.our_outcomes(batch, [s.ours for s in contracts], perms)
    agent = oracle.sponsio_agent(sorted(perms))
    for t, trace in enumerate(batch):
        st_trace = oracle.sponsio_trace(trace)
        for s in contracts:
            theirs = oracle.sponsio_outcome(s.theirs(agent), st_trace, {oracle.AGENT: agent})
            got = ours[(t, s.ours.id)]
            assert got == theirs, (
                f"{s.family}: ours {got}, Sponsio {theirs}\n"
                f"contract: {[g.text for g in s.ours.guarantees]} "
                f"assuming {[a.text for a in s.ours.assumptions]} ({s.ours.activate_at})\n"
                f"trace: {[(e.type, e.tool, e.args) for e in trace]}"
            )
            oracle.PAIRS[s.family] += 1


PERM_SETS = st.sets(st.sampled_from(PERMS)).map(frozenset)


@SETTINGS
@given(st.lists(traces, min_size=1, max_size=8), specs(6), PERM_SETS)
def test_random_contracts_agree_with_sponsio(batch: list[Any], contracts: list[Any],
                                             perms: frozenset[str]) -> None:  # fmt: skip
    compare(batch, contracts, perms)


@pytest.mark.parametrize("name", PATTERN_NAMES)
def test_pattern_library_agrees_with_sponsio(name: str) -> None:
    """Every pattern both libraries share, on its own random traces and arguments; the
    traces have LLM turns between the calls (and repeated calls) unless the pattern counts
    positions (SEMANTICS.md §1: a tool contract's positions are tool calls only)."""
    kinds = traces if name in POSITIONAL else st.one_of(traces, llm_traces())

    @settings(SETTINGS, max_examples=12)
    @given(st.lists(kinds, min_size=4, max_size=8), st.lists(pattern_calls(name), min_size=3,
           max_size=3), PERM_SETS)  # fmt: skip
    def run(batch: list[Any], calls: list[Any], perms: frozenset[str]) -> None:
        compare(batch, [pattern_spec(f"p{i}", n, a) for i, (n, a) in enumerate(calls)], perms)

    run()


@SETTINGS
@given(
    st.lists(value_traces, min_size=1, max_size=8),
    st.lists(st.integers(0, 10**6), min_size=6, max_size=6).flatmap(
        lambda ids: st.tuples(*(value_specs(f"v{i}") for i in range(len(ids))))
    ),
)
def test_value_terms_and_evidence_agree_with_sponsio(batch: list[Any], contracts: Any) -> None:
    """ArgValue/CtxValue comparisons and the two evidence patterns, on traces with
    context updates and claim verdicts."""
    compare(batch, list(contracts), frozenset())
