"""Per-contract online state of the guard: clauses stepped event by event, with rollback.

A guarantee (or a global contract's assumption conjunction) is monitored in
one of three ways, all with state that does not grow with the trace:

- ``G ψ`` with ψ future-free (every safety pattern): ψ is compiled by
  ``past`` (in a one-clause ``bank.Bank``) and the clause fires at every
  event where ψ is false now. These are exactly the offending events of
  SEMANTICS.md §4.1, so a warned or observed contract keeps firing at each
  later offence too.
- ``G(p → F q)`` and ``G(p → F[a,b] q)`` with p, q future-free: the small
  state machines of ``live``; the clause fires at the event whose prefix
  first becomes bad (the blame of §4.1), liveness is read at the end.
- anything else: ``ltl.monitor.Monitor``, with the same firing rule.

The guard fuses the contracts without assumptions whose guarantees are all
of the first two kinds into its one ``Bank`` (``is_plain``); the others run
here, one ``ContractRun`` each.

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

from collections.abc import Mapping, Sequence
from typing import Any

from sponsio_audit.guard.bank import Bank, fusable, is_safety
from sponsio_audit.guard.past import PastFormula
from sponsio_audit.ltl.ast import Formula, is_future_free
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.ltl.monitor import Monitor
from sponsio_audit.ltl.parse import show
from sponsio_audit.ltl.reference import Check
from sponsio_audit.vocab import ASSUMPTION, LIVENESS

__all__ = ["ClauseRun", "ContractRun", "is_plain", "is_safety", "unsupported"]


class ClauseRun:
    """One monitored formula; ``step`` says whether the new event offends it."""

    __slots__ = ("_saved", "bank", "formula", "kind", "mon", "text")

    def __init__(
        self,
        formula: Formula,
        kind: str,
        index: Mapping[Any, int],
        kinds: Mapping[Any, str] | None = None,
    ) -> None:
        self.formula = formula
        self.text = show(formula)
        self.kind = kind
        self.bank: Bank | None = None
        self.mon: Monitor | None = None
        if fusable(formula):
            self.bank = Bank([formula], index, kinds)
        else:
            self.mon = Monitor(formula)
        self._saved: list[Any] | None = None

    def step(self, valuation: Mapping[Any, Any] | None, values: Sequence[Any]) -> bool:
        """Consume one event (as a mapping and as the value list in index order);
        True when the event offends the clause (a fresh violation). The mapping is
        only read by monitored clauses (``needs_mapping``)."""
        if self.bank is not None:
            self._saved = self.bank.state.copy()
            return bool(self.bank.step(values))
        mon = self.mon
        assert mon is not None and valuation is not None
        before = mon.value
        return mon.step(valuation) is False and before is not False

    @property
    def needs_mapping(self) -> bool:
        return self.mon is not None

    def rollback(self) -> None:
        """Undo the last ``step``."""
        if self.bank is not None:
            if self._saved is not None:
                self.bank.state = self._saved
                self._saved = None
        elif self.mon is not None:
            self.mon.rollback()

    def finish(self) -> Check | None:
        """The liveness verdict at the end of the session (None when none is open)."""
        if self.bank is not None:
            return self.bank.liveness(0)
        assert self.mon is not None
        c = self.mon.finish()
        return c if c.value is False and c.kind == LIVENESS else None


def is_plain(contract: Contract) -> bool:
    """No assumptions and only safety or response guarantees: the guard fuses these
    into its one ``Bank``."""
    return not any(a.skipped is None for a in contract.assumptions) and all(
        fusable(g.formula) for g in contract.guarantees if g.skipped is None
    )


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

    def __init__(
        self,
        contract: Contract,
        index: Mapping[Any, int],
        kinds: Mapping[Any, str] | None = None,
    ) -> None:
        self.contract = contract
        self.index = index
        self.kinds = kinds
        self.guarantee_clauses = [g for g in contract.guarantees if g.skipped is None]
        assumptions = [a for a in contract.assumptions if a.skipped is None]
        self.first_match = contract.activate_at == "first_match"
        self.activators = (
            [PastFormula(a.formula, index, kinds) for a in assumptions] if self.first_match else []
        )
        self.seen = [False] * len(self.activators)
        self.active = not self.activators
        self.offset = 0
        conj = None if self.first_match else contract.assumption()
        self.assumption = ClauseRun(conj, ASSUMPTION, index, kinds) if conj is not None else None
        self.assumption_failed = False
        self.guarantees = self._fresh_guarantees() if self.active else []
        self._undo: tuple[Any, ...] | None = None
        self._stepped: list[ClauseRun] = []
        self.needs_mapping = not all(fusable(g.formula) for g in self.guarantee_clauses) or (
            conj is not None and not fusable(conj)
        )

    def _fresh_guarantees(self) -> list[ClauseRun]:
        return [
            ClauseRun(g.formula, "guarantee", self.index, self.kinds)
            for g in self.guarantee_clauses
        ]

    def step(
        self, valuation: Mapping[Any, Any] | None, values: Sequence[Any], position: int
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
                out.append((g, c.shifted(self.offset)))
        return out
