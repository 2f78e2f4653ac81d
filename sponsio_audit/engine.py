"""The two evaluation engines: contracts × traces → ``Finding`` rows.

Views (SEMANTICS.md §1): a contract sees the events of its atoms' types,
restricted to its agent; stateful atoms are grounded over all of that
agent's events and read at the view's positions. A contract of one agent
on a trace where that agent has no event is ``not_applicable`` there.
``segregation_of_duty`` contracts (``per_agent``) are evaluated on each
agent's events apart; the trace violates when any agent does.

``reference_findings`` is the obviously-correct path (online grounding and
``contract.judge`` per trace); ``columnar_findings`` is the fast path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from sponsio_audit.atoms.online import ground_events
from sponsio_audit.event import event_from_row
from sponsio_audit.ltl.contract import Contract, judge
from sponsio_audit.verdicts import Finding


def _groups(contract: Contract, rows: list[dict[str, Any]], idxs: list[int]) -> list[list[int]]:
    """Row indices of each sub-trace the contract is evaluated on (agent filter, per-agent)."""
    if contract.agent != "*":
        idxs = [i for i in idxs if rows[i]["agent"] == contract.agent]
    if not contract.per_agent:
        return [idxs]
    by_agent: dict[Any, list[int]] = {}
    for i in idxs:
        by_agent.setdefault(rows[i]["agent"], []).append(i)
    return [by_agent[k] for k in sorted(by_agent, key=lambda a: (a is None, str(a)))] or [[]]


def _merge(trace_id: str, contract: Contract, parts: list[list[Finding]]) -> list[Finding]:
    """Combine per-agent findings: violated if any part is, else unverifiable if any is."""
    out = []
    for g in range(len(contract.guarantees)):
        fs = [p[g] for p in parts]
        bad = [f for f in fs if f.verdict == "violated"]
        if bad:
            first = min(bad, key=lambda f: f.blame if f.blame is not None else -1)
            offending = tuple(sorted({r for f in bad for r in f.offending}))
            out.append(
                Finding(
                    trace_id,
                    contract,
                    g,
                    "violated",
                    first.kind,
                    first.blame,
                    offending,
                    first.opened,
                )
            )
        elif any(f.verdict == "unverifiable" for f in fs):
            out.append(Finding(trace_id, contract, g, "unverifiable"))
        else:
            out.append(fs[0])
    return out


def _trace_findings(
    trace_id: str,
    contract: Contract,
    rows: list[dict[str, Any]],
    idxs: list[int],
    perms: Mapping[str, frozenset[str]],
) -> list[Finding]:
    if contract.agent != "*" and not any(rows[i]["agent"] == contract.agent for i in idxs):
        return [
            Finding(trace_id, contract, g, "not_applicable", reason="agent not in trace")
            for g in range(len(contract.guarantees))
        ]
    types = contract.view_types()
    atoms = contract.atoms()
    parts = []
    for group in _groups(contract, rows, idxs):
        events = [event_from_row(rows[i]) for i in group]
        vals = ground_events(atoms, events, perms)
        view = [p for p, i in enumerate(group) if rows[i]["type"] in types]
        verdicts = judge(contract, [vals[p] for p in view])
        at = [group[p] for p in view]  # view position -> events row
        parts.append(
            [
                Finding(
                    trace_id,
                    contract,
                    v.guarantee,
                    v.verdict,
                    v.kind,
                    None if v.blame is None else at[v.blame],
                    tuple(at[p] for p in v.offending),
                    None if v.opened is None else at[v.opened],
                    v.reason,
                )
                for v in verdicts
            ]
        )
    return parts[0] if len(parts) == 1 else _merge(trace_id, contract, parts)


def reference_findings(
    events: pa.Table, contracts: Iterable[Contract], perms: Mapping[str, frozenset[str]]
) -> list[Finding]:
    """Findings by the reference engine: online grounding and ``contract.judge`` per trace."""
    rows = events.to_pylist()
    traces: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        traces.setdefault(r["trace_id"], []).append(i)
    out: list[Finding] = []
    for trace_id, idxs in traces.items():
        for c in contracts:
            out.extend(_trace_findings(trace_id, c, rows, idxs, perms))
    return out
