"""Top lists: by severity, then round-robin across contracts (one noisy contract hides none)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sponsio_audit.report.ranking import spread, top

SEVERITIES = ("high", "medium", "low")
RANK = {s: i for i, s in enumerate(SEVERITIES)}

violations = st.lists(
    st.tuples(st.sampled_from(["c.a", "c.b", "c.c", "c.d"]), st.integers(0, 30)),
    max_size=60,
).map(
    lambda rows: [
        # a contract has one severity (as in sponsio.yaml): c.a, c.b high; c.c medium; c.d low
        {
            "contract_id": cid,
            "severity": {"c.a": "high", "c.b": "high", "c.c": "medium", "c.d": "low"}[cid],
            "trace_id": f"t{n:03d}",
            "n": i,
        }
        for i, (cid, n) in enumerate(rows)
    ]
)


@given(violations, st.integers(0, 70))
def test_top_is_a_severity_ordered_spread(rows: list[dict[str, Any]], limit: int) -> None:
    ranked = spread(rows)
    assert sorted(v["n"] for v in ranked) == [v["n"] for v in rows]  # a permutation
    assert [RANK[v["severity"]] for v in ranked] == sorted(RANK[v["severity"]] for v in ranked)
    for cid in {v["contract_id"] for v in rows}:  # each contract keeps its own order
        assert [v["n"] for v in ranked if v["contract_id"] == cid] == [
            v["n"] for v in rows if v["contract_id"] == cid
        ]
    shown = top(rows, limit)
    assert shown == (ranked[:limit] if limit else ranked)
    for sev in SEVERITIES:  # the first k of a severity show min(k, its contracts) contracts
        mine = [v for v in ranked if v["severity"] == sev]
        contracts = {v["contract_id"] for v in mine}
        for k in range(1, len(mine) + 1):
            assert len({v["contract_id"] for v in mine[:k]}) == min(k, len(contracts))


def test_noisy_contract_does_not_hide_the_others() -> None:
    noisy = [{"contract_id": "a.noisy", "severity": "high", "n": i} for i in range(50)]
    quiet = [{"contract_id": "b.quiet", "severity": "high", "n": 100}]
    low = [{"contract_id": "c.low", "severity": "low", "n": 200}]
    shown = top(noisy + quiet + low, 3)
    assert [v["contract_id"] for v in shown] == ["a.noisy", "b.quiet", "a.noisy"]
    assert top(noisy + quiet + low, 0)[-1]["contract_id"] == "c.low"
