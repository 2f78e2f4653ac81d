"""Shared helpers of the guard tests: contracts from text, independent grounding, audits."""

from __future__ import annotations

from collections.abc import Sequence

from sponsio_audit.guard import Decision
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.contract import Clause, Contract, Strategy, judge
from sponsio_audit.ltl.parse import parse
from sponsio_audit.ltl.reference import Value


def contract(
    cid: str,
    *guarantees: str,
    assumptions: Sequence[str] = (),
    activate_at: str = "global",
    strategy: str = "block",
    safe_tool: str | None = None,
    agent: str = "*",
) -> Contract:
    """A contract from formula texts."""
    return Contract(
        id=cid,
        agent=agent,
        guarantees=tuple(Clause(parse(g)) for g in guarantees),
        assumptions=tuple(Clause(parse(a)) for a in assumptions),
        activate_at=activate_at,
        strategy=Strategy(strategy, safe_tool),
    )


def ground_tools(tools: Sequence[str], atoms: Sequence[Atom]) -> list[dict[Atom, Value]]:
    """Valuations of called/called_any/count over tool names (the test's own grounding)."""
    counts: dict[str, int] = {}
    out = []
    for t in tools:
        counts[t] = counts.get(t, 0) + 1
        v: dict[Atom, Value] = {}
        for a in atoms:
            if a.name == "called":
                v[a] = t == a.args[0]
            elif a.name == "called_any":
                v[a] = True
            elif a.name == "count":
                v[a] = counts.get(str(a.args[0]), 0)
            else:
                raise AssertionError(f"test grounding has no {a.name}")
        out.append(v)
    return out


def fresh_offences(c: Contract, tools: Sequence[str]) -> set[tuple[str, str, str]]:
    """(contract id, kind, clause) the audit of ``tools`` blames on the last event."""
    trace = ground_tools(tools, c.atoms())
    last = len(trace) - 1
    out = set()
    for v in judge(c, trace):
        if (
            v.verdict == "violated"
            and v.kind in ("guarantee", "assumption")
            and last in v.offending
        ):
            out.add((c.id, v.kind, v.text if v.kind == "guarantee" else ""))
    return out


def offences(c: Contract, tools: Sequence[str]) -> set[tuple[str, str, str, int]]:
    """Every (contract id, kind, clause, position) the audit of the whole trace lists."""
    trace = ground_tools(tools, c.atoms())
    out = set()
    for v in judge(c, trace):
        if v.verdict == "violated" and v.kind in ("guarantee", "assumption"):
            for p in v.offending:
                out.add((c.id, v.kind, v.text if v.kind == "guarantee" else "", p))
    return out


def decision_keys(
    d: Decision, kinds: tuple[str, ...] = ("guarantee", "assumption")
) -> set[tuple[str, str, str]]:
    """The (contract id, kind, clause) of a decision's violations, as the audit names them."""
    return {
        (v.contract_id, v.kind, v.guarantee if v.kind == "guarantee" else "")
        for v in d.violations
        if v.kind in kinds
    }
