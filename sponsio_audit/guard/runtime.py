"""Per-contract online state of the guard: clauses stepped event by event, with rollback.

A guarantee (or a global contract's assumption conjunction) is monitored in
one of two ways, both with state that does not grow with the trace:

- ``G ψ`` with ψ future-free (every safety pattern): ψ is compiled by
  ``past.PastFormula`` and the clause fires at every event where ψ is false
  now. These are exactly the offending events of SEMANTICS.md §4.1, so a
  warned or observed contract keeps firing at each later offence too.
- anything else: ``ltl.monitor.Monitor``; the clause fires at the event
  whose prefix first becomes bad (the blame of §4.1). Liveness is read from
  ``Monitor.finish`` at the end of the session.

Contracts follow §4.2:

- ``global`` with assumptions: the assumption conjunction is a clause of
  kind ``assumption``; once it has failed on an appended event the
  guarantees are no longer checked (the audit reports only the assumption).
  Online the guard cannot know that an assumption will fail later, so it
  enforces the guarantees while the assumption's prefix is not bad.
- ``first_match``: each assumption must be future-free (a state predicate
  such as ``called(x)`` or ``O perm(p)``); the contract activates at the
  first event where every assumption has been true at some event so far
  (k*), and its guarantees are monitored from that event on as a trace of
  their own. Contracts with a future-time first_match assumption are not
  guarded (``Guard.skipped`` says why): the guard cannot look ahead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sponsio_audit.ltl.ast import Always, And, Formula, is_future_free
from sponsio_audit.ltl.contract import Clause, Contract
from sponsio_audit.ltl.monitor import Monitor
from sponsio_audit.ltl.parse import show
from sponsio_audit.ltl.reference import Check

from .past import PastFormula


class ClauseRun:
    """One monitored formula; ``step`` says whether the new event offends it."""

    __slots__ = ("_saved", "formula", "kind", "mon", "past", "text")

    def __init__(self, formula: Formula, kind: str, index: Mapping[Any, int]) -> None:
        self.formula = formula
        self.text = show(formula)
        self.kind = kind
        self.past: PastFormula | None = None
        self.mon: Monitor | None = None
        if is_safety(formula):
            self.past = PastFormula(formula.arg, index)  # type: ignore[union-attr]
        else:
            self.mon = Monitor(formula)
        self._saved: list[Any] | None = None

    def step(self, valuation: Mapping[Any, Any], values: list[Any]) -> bool:
        """Consume one event (as a mapping and as the value list in index order);
        True when the event offends the clause (a fresh violation)."""
        if self.past is not None:
            self._saved = self.past.state.copy()
            return self.past.step(values) is False
        mon = self.mon
        assert mon is not None
        before = mon.value
        return mon.step(valuation) is False and before is not False

    def rollback(self) -> None:
        """Undo the last ``step``."""
        if self.past is not None:
            if self._saved is not None:
                self.past.state = self._saved
                self._saved = None
        elif self.mon is not None:
            self.mon.rollback()

    def finish(self) -> Check | None:
        """The liveness verdict at the end of the session (None for past clauses)."""
        if self.mon is None:
            return None
        c = self.mon.finish()
        return c if c.value is False and c.kind == "liveness" else None


def is_safety(f: Formula) -> bool:
    """``G ψ`` with ψ future-free: offending events are where ψ is false (§4.1)."""
    return isinstance(f, Always) and is_future_free(f.arg)


def is_plain(contract: Contract) -> bool:
    """No assumptions and only safety guarantees: the guard fuses these into one ``PastBank``."""
    return not any(a.skipped is None for a in contract.assumptions) and all(
        is_safety(g.formula) for g in contract.guarantees if g.skipped is None
    )


def _conj(clauses: list[Clause]) -> Formula | None:
    fs = [c.formula for c in clauses]
    if not fs:
        return None
    out = fs[0]
    for f in fs[1:]:
        out = And(out, f)
    return out


def unsupported(contract: Contract) -> str | None:
    """Why the guard cannot enforce ``contract`` (None when it can)."""
    if not any(g.skipped is None for g in contract.guarantees):
        return "no guarantee can be evaluated (LLM-judge constraints only)"
    if contract.activate_at == "first_match":
        for a in contract.assumptions:
            if a.skipped is None and not is_future_free(a.formula):
                return "first_match assumption uses future operators: the guard cannot look ahead"
    return None


class ContractRun:
    """The online state of one contract (module doc); every step can be rolled back."""

    def __init__(self, contract: Contract, index: Mapping[Any, int]) -> None:
        self.contract = contract
        self.index = index
        self.guarantee_clauses = [g for g in contract.guarantees if g.skipped is None]
        assumptions = [a for a in contract.assumptions if a.skipped is None]
        self.first_match = contract.activate_at == "first_match"
        self.activators = (
            [PastFormula(a.formula, index) for a in assumptions] if self.first_match else []
        )
        self.seen = [False] * len(self.activators)
        self.active = not self.activators
        self.offset = 0
        conj = None if self.first_match else _conj(assumptions)
        self.assumption = ClauseRun(conj, "assumption", index) if conj is not None else None
        self.assumption_failed = False
        self.guarantees = self._fresh_guarantees() if self.active else []
        self._undo: tuple[Any, ...] | None = None
        self._stepped: list[ClauseRun] = []

    def _fresh_guarantees(self) -> list[ClauseRun]:
        return [ClauseRun(g.formula, "guarantee", self.index) for g in self.guarantee_clauses]

    def step(
        self, valuation: Mapping[Any, Any], values: list[Any], position: int
    ) -> list[ClauseRun]:
        """Consume the event at ``position``; the clauses it offends."""
        stepped: list[ClauseRun] = []
        self._stepped = stepped
        self._undo = (self.active, self.offset, self.guarantees, self.assumption_failed, None)
        if not self.active:
            saved = [p.state.copy() for p in self.activators]
            self._undo = (*self._undo[:4], (saved, self.seen.copy()))
            for i, p in enumerate(self.activators):
                if p.step(values) is True:
                    self.seen[i] = True
            if not all(self.seen):
                return []
            self.active, self.offset = True, position
            self.guarantees = self._fresh_guarantees()
        fired: list[ClauseRun] = []
        if self.assumption is not None:
            stepped.append(self.assumption)
            if self.assumption.step(valuation, values):
                fired.append(self.assumption)
                self.assumption_failed = True
            if self.assumption_failed:
                return fired
        for g in self.guarantees:
            stepped.append(g)
            if g.step(valuation, values):
                fired.append(g)
        return fired

    def rollback(self) -> None:
        """Undo the last ``step`` (the event was blocked or redirected)."""
        if self._undo is None:
            return
        for c in self._stepped:
            c.rollback()
        self.active, self.offset, self.guarantees, self.assumption_failed, pre = self._undo
        if pre is not None:
            saved, seen = pre
            for p, s in zip(self.activators, saved, strict=True):
                p.state = s
            self.seen = seen
        self._undo = None
        self._stepped = []

    def finish(self) -> list[tuple[ClauseRun, Check]]:
        """Clauses left with an open obligation at the end (liveness), positions in the view."""
        if not self.active:
            return []
        if self.assumption is not None:
            if self.assumption_failed:
                return []
            c = self.assumption.finish()
            if c is not None:
                return [(self.assumption, c)]
        out = []
        for g in self.guarantees:
            c = g.finish()
            if c is not None:
                out.append((g, _shift(c, self.offset)))
        return out


def _shift(c: Check, k: int) -> Check:
    if not k:
        return c
    return Check(
        c.value,
        c.kind,
        None if c.blame is None else c.blame + k,
        tuple(i + k for i in c.offending),
        None if c.opened is None else c.opened + k,
    )
