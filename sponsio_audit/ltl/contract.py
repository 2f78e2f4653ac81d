"""Contracts and their verdicts on one trace (SEMANTICS.md §1 view, §4.2).

A ``Contract`` bundles guarantees (each checked on its own), assumptions
(a conjunction), ``activate_at``, severity and strategy. ``judge`` turns
one grounded view of a trace into one ``Verdict`` per guarantee; it takes
the formula checker as a parameter so that the reference evaluator and the
monitor give verdicts through the same code.

``activate_at: first_match`` (as Sponsio's runtime does it): each
assumption is φ or ``F φ``; its activation point is the first position
where φ holds (for ``F φ`` the first φ, not 0). k* is the latest of them.
Each guarantee is evaluated at position k* of the whole view: past
operators and counters see the events before k*, only the obligation
starts there. ``at_activation`` rewrites a guarantee g into a formula that
holds at 0 exactly when g holds at k*, given the internal atom ``START``
true at k* only (``G ψ`` becomes ``G(O START → ψ)``, which keeps every
offending event at or after k*; anything else ``G(START → g)``, which is false at the
first prefix that shows g false at k*: a guarantee violation blamed there, not an
obligation left open at the end), so every evaluator runs it unchanged on the whole view.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import Always, And, Atom, Eventually, Formula, Implies, Once, atoms
from sponsio_audit.ltl.parse import show
from sponsio_audit.vocab import (
    ASSUMPTION,
    ASSUMPTION_UNKNOWN,
    NOT_APPLICABLE,
    PASS,
    SKIPPED,
    UNVERIFIABLE,
    VIOLATED,
    assumption_skipped,
)


@dataclass(frozen=True)
class Clause:
    """One guarantee or assumption: a formula plus where it came from.

    ``skipped`` holds the reason when the clause cannot be evaluated offline
    (an LLM-judge constraint); such a clause never passes.
    """

    formula: Formula
    desc: str = ""
    source: str | None = None
    pattern: str | None = None
    args: tuple[Any, ...] = ()
    liveness: bool = False
    skipped: str | None = None

    @property
    def text(self) -> str:
        """The formula in the text syntax."""
        return show(self.formula)


@dataclass(frozen=True)
class Strategy:
    """What a guard does on a violation: block, escalate, warn or redirect to ``safe_tool``."""

    kind: str = "block"
    safe_tool: str | None = None


@dataclass(frozen=True)
class Contract:
    """A contract of one agent (``"*"`` for every agent)."""

    id: str
    agent: str
    guarantees: tuple[Clause, ...]
    assumptions: tuple[Clause, ...] = ()
    description: str = ""
    activate_at: str = "global"
    severity: str = "high"
    strategy: Strategy = field(default_factory=Strategy)
    source: str | None = None
    per_agent: bool = False  # segregation_of_duty: evaluated on each agent's events apart
    origin: tuple[str, int | None] | None = field(default=None, compare=False)
    """(file, line) of the contract in its sponsio.yaml when loaded from one (reports
    place it there); not part of its identity."""

    def formulas(self) -> list[Formula]:
        """Every formula that is evaluated offline (skipped clauses left out)."""
        return [c.formula for c in (*self.assumptions, *self.guarantees) if c.skipped is None]

    def atoms(self) -> list[Any]:
        """Every atom the contract's evaluated formulas use, without repeats."""
        out: dict[Any, None] = {}
        for f in self.formulas():
            for a in atoms(f):
                out.setdefault(a, None)
        return list(out)

    def assumption(self) -> Formula | None:
        """The conjunction of the assumptions evaluated offline (left-nested), or None."""
        out: Formula | None = None
        for c in self.assumptions:
            if c.skipped is None:
                out = c.formula if out is None else And(out, c.formula)
        return out

    def skipped_assumption(self) -> str | None:
        """The skip reason of the first assumption that cannot be evaluated offline, if any."""
        return next((c.skipped for c in self.assumptions if c.skipped is not None), None)


def derive_id(agent: str, content: Any) -> str:
    """A stable id from the agent and the contract's content (used when none is given)."""
    digest = hashlib.sha256(repr((agent, content)).encode("utf-8")).hexdigest()[:12]
    return f"{agent if agent != '*' else 'any'}.{digest}"


@dataclass(frozen=True)
class Verdict:
    """The verdict of one guarantee of a contract on one trace (positions in the view)."""

    guarantee: int
    text: str
    verdict: str
    kind: str | None = None
    blame: int | None = None
    offending: tuple[int, ...] = ()
    opened: int | None = None
    reason: str | None = None


Checker = Callable[[Formula, reference.Trace], reference.Check]


START = Atom("__activation__")
"""Internal atom of first_match evaluation: true at k* only (module doc)."""


def trigger(assumption: Formula) -> Formula:
    """What activates a first_match assumption: φ for ``F φ``, else the assumption itself."""
    return assumption.arg if isinstance(assumption, Eventually) else assumption


def at_activation(g: Formula) -> Formula:
    """A formula true at 0 iff ``g`` is true at k*, where ``START`` holds at k* only (on an
    active trace: an inactive one is not_applicable, never evaluated)."""
    match g:
        case Always(psi):
            return Always(Implies(Once(START), psi))
        case And(left, right):
            return And(at_activation(left), at_activation(right))
    return Always(Implies(START, g))


NEVER, UNDECIDED = -1, -2
"""``activation`` when some assumption never activates, or when an unknown (a position
where φ may hold) comes before its first certain activation, so k* is not recorded."""


def activation(contract: Contract, trace: reference.Trace) -> int:
    """k* for ``first_match``, 0 for global; ``NEVER`` when some assumption is false at every
    position (not_applicable, whatever the others), else ``UNDECIDED`` when some assumption
    is unknown before it first holds, or unknown and never true (the contract might have
    activated there: unverifiable, never a not_applicable that hides a violation, §2)."""
    if contract.activate_at != "first_match":
        return 0
    k, undecided = 0, False
    for c in contract.assumptions:
        if c.skipped is not None:
            continue
        vals = reference.values(trigger(c.formula), trace)
        maybe = next((i for i, v in enumerate(vals) if v is not False), None)
        if maybe is None:
            return NEVER
        if vals[maybe] is None:
            undecided = True
        k = max(k, maybe)
    return UNDECIDED if undecided else k


def judge(
    contract: Contract,
    trace: reference.Trace,
    checker: Checker = reference.check,
    start: int | None = None,
) -> list[Verdict]:
    """One verdict per guarantee of ``contract`` on a grounded view (§4.2).

    ``start`` is k* when the caller has computed it (first_match); by
    default it is computed with the reference evaluator.
    """
    out: list[Verdict] = []
    gs = contract.guarantees

    def each(verdict: str, **kw: Any) -> list[Verdict]:
        return [
            Verdict(i, g.text, SKIPPED, reason=g.skipped)
            if g.skipped is not None
            else Verdict(i, g.text, verdict, **kw)
            for i, g in enumerate(gs)
        ]

    skipped_a = contract.skipped_assumption()
    if skipped_a is not None:
        # an assumption we cannot evaluate must not be dropped: that could turn into a pass
        return [
            Verdict(i, g.text, SKIPPED, reason=assumption_skipped(skipped_a))
            for i, g in enumerate(gs)
        ]
    if contract.activate_at == "first_match":
        k = activation(contract, trace) if start is None else start
        if k == NEVER:
            return each(NOT_APPLICABLE)
        if k == UNDECIDED:
            return each(UNVERIFIABLE, reason=ASSUMPTION_UNKNOWN)
    else:
        k = 0
        a = contract.assumption()
        if a is not None:
            ca = checker(a, trace)
            if ca.value is False:
                return each(
                    VIOLATED,
                    kind=ASSUMPTION,
                    blame=ca.blame,
                    offending=ca.offending,
                    opened=ca.opened,
                )
            if ca.value is None:
                return each(UNVERIFIABLE, reason=ASSUMPTION_UNKNOWN)
    view = trace
    if contract.activate_at == "first_match":
        view = [{**v, START: i == k} for i, v in enumerate(trace)]
    for i, g in enumerate(gs):
        if g.skipped is not None:
            out.append(Verdict(i, g.text, SKIPPED, reason=g.skipped))
            continue
        f = at_activation(g.formula) if contract.activate_at == "first_match" else g.formula
        c = checker(f, view)
        if c.value is True:
            out.append(Verdict(i, g.text, PASS))
        elif c.value is None:
            out.append(Verdict(i, g.text, UNVERIFIABLE))
        else:
            out.append(Verdict(i, g.text, VIOLATED, c.kind, c.blame, c.offending, c.opened))
    return out
