"""The online rules of the value atoms and the evidence atoms (a base of ``Grounder``).

Decisions where SEMANTICS.md is silent (the columnar grounding does the same):

* ``arg_value(t, f)``: at a call of t, the field's JSON value
  (``fields.term_value``); kept at every other position (other tools'
  calls too), like ``arg_length``; unknown before the first call of t, at
  a call of t whose args are missing or have no field f, and from a call
  with no recorded tool on (it may have been one of t).
* ``ctx_value(k)``: the value the latest context_update recorded for
  top-level key k, unknown before one did (as ``ctx``).
* evidence events (Sponsio's claim verdicts, ``EvidenceResult.to_event``):
  the predicate is the event's ``tool``, the verdict and the policy action
  are ``args["verdict"]`` / ``args["action"]``. ``claim_emitted(p)`` is
  true at an evidence event of p; ``evidence_verdict(p, v)`` and
  ``evidence_action(p, a)`` compare in any case and are unknown there when
  the args (or that entry) were not recorded; at an evidence event with no
  recorded predicate all three are unknown (it may have been p).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from sponsio_audit.atoms import fields
from sponsio_audit.atoms.fields import MISSING
from sponsio_audit.atoms.journal import Journal
from sponsio_audit.atoms.registry import EVIDENCE
from sponsio_audit.event import Event
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.reference import Value


class _Step(Protocol):
    """What the rules read of one event (``online._Ev``)."""

    e: Event
    nameless: bool

    def calls(self, key: tuple[bool, str]) -> bool: ...


Eval = Callable[[Any], Value]


class TermRules(Journal):
    """``_b_<atom>`` builders of the value and evidence atoms (see the module doc)."""

    def _b_arg_value(self, atom: Atom, t: str, f: str) -> Eval:
        key = fields.tool_key(str(t))

        def fn(ev: _Step) -> Value:
            if ev.nameless or ev.calls(key):
                v = MISSING if ev.nameless else fields.field_value(ev.e.args, str(f))
                known = v is not MISSING and not fields.opaque(v)
                self._set(atom, fields.term_value(v) if known else None)
            return self._get(atom)  # no value before the first call of t: unknown

        return fn

    def _b_ctx_value(self, atom: Atom, k: str) -> Eval:
        self._ctx = True
        return lambda ev: self._get(("ctxv", str(k)))

    def _b_claim_emitted(self, atom: Atom, p: str) -> Eval:
        return _evidence(str(p), lambda e: True)

    def _b_evidence_verdict(self, atom: Atom, p: str, v: Any) -> Eval:
        return _evidence(str(p), lambda e: fields.evidence_is(e.args, "verdict", v))

    def _b_evidence_action(self, atom: Atom, p: str, a: Any) -> Eval:
        return _evidence(str(p), lambda e: fields.evidence_is(e.args, "action", a))


def _evidence(p: str, then: Callable[[Event], bool | None]) -> Eval:
    """A bool atom at evidence events of predicate p (unknown at one of no recorded p)."""

    def fn(ev: _Step) -> Value:
        e = ev.e
        if e.type != EVIDENCE:
            return False
        if e.tool is None:
            return None
        return then(e) if e.tool == p else False

    return fn
