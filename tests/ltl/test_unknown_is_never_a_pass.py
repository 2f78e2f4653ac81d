"""Soundness of verdicts on traces with unknowns (SEMANTICS.md §2, §4.2).

"An audit never turns unknown into pass": whatever the unrecorded facts
were, a trace judged ``pass`` or ``not_applicable`` must be judged the same
once they are filled in, and one judged ``violated`` must stay violated.
Each unknown atom value of a random trace is filled in every way (or in 64
random ways when there are many) and the contract judged again; the
verdicts with unknowns must be those every filling agrees on. The oracle is
the definition itself, not another evaluator: the columnar evaluator is held
to ``judge`` by ``test_columnar_contracts``.
"""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ltl.contract import Contract, judge
from tests.ltl.columnar_strategies import contracts, traces
from tests.ltl.strategies import COUNT

_SETTLED = ("pass", "not_applicable", "violated")


def _fillings(trace: list[dict], rnd: random.Random) -> list[list[dict]]:
    """``trace`` with its unknown values filled in: every way, or 64 random ways."""
    holes = [(i, a) for i, ev in enumerate(trace) for a, v in ev.items() if v is None]
    choices = [range(5) if a == COUNT else (False, True) for _, a in holes]
    if len(holes) <= 6:
        picks = list(itertools.product(*choices))
    else:
        picks = [tuple(rnd.choice(c) for c in choices) for _ in range(64)]
    out = []
    for pick in picks:
        filled = [dict(ev) for ev in trace]
        for (i, a), v in zip(holes, pick, strict=True):
            filled[i][a] = v
        out.append(filled)
    return out


@settings(max_examples=400, deadline=None)
@given(contracts(), traces(max_size=6), st.randoms(use_true_random=False))
def test_a_verdict_with_unknowns_holds_whatever_they_were(
    contract: Contract, trace: list[dict], rnd: random.Random
) -> None:
    """A first_match contract whose assumption is unknown before it first holds, or unknown
    and never true, is unverifiable: the unrecorded event may have activated it (before,
    it was not_applicable, or judged from a later activation)."""
    partial = judge(contract, trace)
    for filled in _fillings(trace, rnd):
        for got, full in zip(partial, judge(contract, filled), strict=True):
            if got.verdict in _SETTLED:
                assert full.verdict == got.verdict, (contract, trace, filled, got, full)
