"""The hook-side guard (Model A): contracts enforced on tool calls as they happen.

``Guard.guard_before(tool, args)`` runs before the tool: one generated
``bank.Bank`` grounds the ``tool_call`` event (``ground``) and steps every
contract without assumptions whose guarantees are safety or response
clauses (``past``, ``live``); the other contracts step on its atom values
(``runtime.ContractRun``); then it decides (``strategies.decide``). A call
that is blocked or redirected is not appended: the state rolls back, so
each later decision equals an audit of the events let through (SEMANTICS.md
§4.2). Cost per call is O(total formula size) at most, and only what the
called tool can change in practice: state is constant per operator and
nothing re-reads the prefix.

Applicable contracts: agent ``agent_id`` or ``"*"``, whose view (§1)
includes ``tool_call``. The guard sees tool calls only, so in a contract
that also uses LLM atoms those atoms take their values at non-source events
(false, or the last value). Contracts the guard cannot run are listed in
``Guard.skipped`` with the reason (``runtime.unsupported``).

``guard_after(decision, result)`` completes the event with its result and
duration (``output_has``, ``latency_exceeds``). The tool already ran, so a
violation found there is recorded as warning-only (action ``warned``,
``observed`` in observe mode). It re-evaluates only when the call is still
the last one stepped (no other ``guard_before`` in between); otherwise the
result stays missing (unknown) for the guard.

``finish()`` returns the liveness violations open at the session end.
One ``threading.Lock`` serialises the calls of one guard (the escalation
callback runs under it). Every decision goes to the session log and, when
an exporter is configured, to OTLP.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sponsio_audit.atoms.registry import TOOL
from sponsio_audit.atoms.view import applies_to
from sponsio_audit.guard import session_log as sl
from sponsio_audit.guard import spans as sp
from sponsio_audit.guard.bank import Bank
from sponsio_audit.guard.ground import ToolGrounder
from sponsio_audit.guard.otlp_export import OtlpHttpExporter
from sponsio_audit.guard.runtime import ContractRun, is_plain, unsupported
from sponsio_audit.guard.strategies import Decision, Escalate, Violation, decide, outcome
from sponsio_audit.guard.support import contract_checks, load, redact, result_text
from sponsio_audit.guard.wrap import guarded as _guarded
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.ltl.reference import Check
from sponsio_audit.vocab import ASSUMPTION, GUARANTEE, LIVENESS

_OUTPUT_ATOMS = frozenset({"output_has", "latency_exceeds"})
_time_ns = time.time_ns
_ALLOWED = (True, "allowed", None, None)  # outcome((), mode) in either mode


class Guard:
    """Enforce (or observe) contracts on one agent's tool calls (module doc)."""

    def __init__(
        self,
        contracts: Sequence[Contract] | str | Path,
        agent_id: str,
        mode: str = "enforce",
        permissions: Any = None,
        escalate: Escalate | None = None,
        session_log: bool | str | Path = True,
        exporter: OtlpHttpExporter | bool | None = None,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        conversation_id: str | None = None,
        history: int = 1000,
    ) -> None:
        if mode not in ("enforce", "observe"):
            raise ValueError("mode must be 'enforce' or 'observe'")
        loaded, cfg_perms = load(contracts, agent_id)
        self.agent_id = agent_id
        self.mode = mode
        self.escalate = escalate
        self.tools = dict(tools or {})
        self.conversation_id = conversation_id
        self.skipped: list[tuple[str, str]] = []
        applicable: list[Contract] = []
        for c in loaded:
            if not applies_to(c, agent_id, TOOL):
                continue
            why = unsupported(c)
            if why is not None:
                self.skipped.append((c.id, why))
            else:
                applicable.append(c)
        self.contracts = applicable
        self.contract_ids = tuple(c.id for c in applicable)
        self._order = {cid: i for i, cid in enumerate(self.contract_ids)}
        self._texts = {
            c.id: [g.text for g in c.guarantees if g.skipped is None] for c in applicable
        }
        atoms: dict[Any, None] = {}
        for c in applicable:
            atoms.update(dict.fromkeys(c.atoms()))
        perms = permissions if permissions is not None else cfg_perms
        if perms is not None and not isinstance(perms, Mapping):
            perms = frozenset(perms)
        # the bank runs the plain contracts (module doc), the rest run on its atom values
        plain = [c for c in applicable if is_plain(c)]
        self._bank_meta = [(c, g.text) for c in plain for g in c.guarantees if g.skipped is None]
        self._bank_violations = [
            (c.id, text, c.severity, c.strategy.kind, c.strategy.safe_tool)
            for c, text in self._bank_meta
        ]
        formulas = [g.formula for c in plain for g in c.guarantees if g.skipped is None]
        rest = [c for c in applicable if c not in plain]
        self.bank = Bank(formulas, grounding=(list(atoms), perms, agent_id), values=bool(rest))
        index = {a: i for i, a in enumerate(self.bank.atoms)}
        self.runs = [ContractRun(c, index, self.bank.kinds) for c in rest]
        self._mapping = any(r.needs_mapping for r in self.runs)
        self._grounding = (list(atoms), perms, agent_id)
        self._tool_grounder: ToolGrounder | None = None
        self._saved: list[Any] = self.bank.state
        self._needs_output = any(a.name in _OUTPUT_ATOMS for a in atoms)
        self._lock = threading.Lock()
        self.position = 0  # events appended
        self._seq = 0
        self._last_us = 0
        self._sec, self._sec_text = -1, ""
        # the last appended call (decision, tool, args, start), for guard_after
        self._last: tuple[Decision, str, Any, int] | None = None
        self._last_logged: Decision | None = None
        self._log = self._make_log(session_log)
        self._owns_exporter = exporter is None
        self.exporter: OtlpHttpExporter | None = (
            OtlpHttpExporter.from_env()
            if exporter is None
            else (exporter if isinstance(exporter, OtlpHttpExporter) else None)
        )
        self.decisions: deque[Decision] = deque(maxlen=history)  # the latest decisions

    def _make_log(self, option: bool | str | Path) -> sl.SessionLog | None:
        if option is False:
            return None
        if option is True:
            return sl.SessionLog(self.agent_id) if sl.enabled_by_env() else None
        p = Path(option)
        if p.is_dir():
            return sl.SessionLog(self.agent_id, root=p)
        return sl.SessionLog(self.agent_id, path=p)

    @property
    def session_log_path(self) -> Path | None:
        """The session file (None when logging is off or nothing was written yet)."""
        return self._log.path if self._log is not None else None

    # ------------------------------------------------------------ checks

    def _stamp(self, ns: int) -> str:
        us = ns // 1000
        if us <= self._last_us:  # unique, increasing: the log groups by ts
            us = self._last_us + 1
        self._last_us = us
        sec = us // 1_000_000
        if sec != self._sec:  # strftime once per second, not per call
            self._sec, self._sec_text = sec, sl.iso_utc(sec * 10**9)[:19] + ".%06dZ"
        return self._sec_text % (us - sec * 1_000_000)

    @property
    def grounder(self) -> ToolGrounder:
        """The guard's grounder on its live state (inspection and tests: a ``ground``
        through it counts as an event for the atoms, not for the contracts)."""
        if self._tool_grounder is None:
            self._tool_grounder = ToolGrounder(*self._grounding)
        self._tool_grounder.state = self.bank.state  # the grounding slots come first
        return self._tool_grounder

    def _step(
        self, tool: str, args: Any, content: str | None, dur: int | None, pos: int
    ) -> list[Violation]:
        bank = self.bank
        self._saved = bank.state.copy()
        if not self.runs:
            out = bank.call(tool, args, content, dur)
            if not out:
                return out
            values: tuple[Any, ...] = ()
        else:
            out, values = bank.call(tool, args, content, dur)
        fired = []
        for k in out:
            cid, text, severity, strategy, safe = self._bank_violations[k]
            message = f"{text} is false at step {pos} (call of {tool})"
            fired.append(Violation(cid, text, GUARANTEE, severity, strategy, message, safe))
        val = dict(zip(bank.atoms, values, strict=True)) if self._mapping else None
        for run in self.runs:
            c, sg = run.contract, run.contract.strategy
            for h in run.step(val, values, pos):
                message = f"{h.text} is false at step {pos} (call of {tool})"
                v = Violation(c.id, h.text, h.kind, c.severity, sg.kind, message, sg.safe_tool)
                fired.append(v)
        if len(fired) > 1:  # contract order: ties between equally strict contracts go to the first
            fired.sort(key=lambda v: self._order[v.contract_id])
        return fired

    def _rollback(self) -> None:
        self.bank.state = self._saved
        for run in self.runs:
            run.rollback()

    def guard_before(self, tool: str, args: Mapping[str, Any] | None = None) -> Decision:
        """Decide on a call of ``tool`` with ``args`` before it runs (module doc)."""
        with self._lock:
            t0 = _time_ns()
            pos = self.position
            seq = self._seq
            self._seq = seq + 1
            raw = dict(args) if args is not None else None
            fired = tuple(self._step(tool, raw, None, None, pos))
            got = outcome(fired, self.mode) if fired else _ALLOWED
            if got is not None:  # no escalation to ask: the Decision is built once
                allowed, action, safe, would = got
                d = Decision(
                    allowed,
                    action,
                    tool,
                    redact(raw),
                    fired,
                    safe,
                    pos,
                    would,
                    seq,
                    self._stamp(t0),
                    self.contract_ids,
                    self.mode,
                    t0,
                    _time_ns(),
                )
            else:
                base = Decision(
                    allowed=True,
                    action="allowed",
                    tool=tool,
                    args=redact(raw),
                    position=pos,
                    seq=seq,
                    ts=self._stamp(t0),
                    checked=self.contract_ids,
                    mode=self.mode,
                    start_ns=t0,
                )
                d = decide(base, fired, self.mode, self.escalate)  # a new Decision
                object.__setattr__(d, "end_ns", _time_ns())  # ours: set before it is seen
            if d.appended:
                self.position = pos + 1
                self._last = (d, tool, raw, t0)
            else:
                self._rollback()
                self._last = None
            self.decisions.append(d)
            if self._log is not None or self.exporter is not None:
                self._record(d, raw_args=raw, logged=True)
            return d

    def guard_after(self, decision: Decision, result: Any) -> Decision:
        """Complete the call of ``decision`` with its ``result`` (warning-only, module doc)."""
        with self._lock:
            last = self._last
            if not self._needs_output or last is None or last[0].seq != decision.seq:
                return decision
            self._last = None
            d0, tool, raw, t0 = last
            now = time.time_ns()
            self._rollback()
            fired = self._step(tool, raw, result_text(result), now - (t0 or now), d0.position)
            old = {(v.contract_id, v.guarantee) for v in d0.violations}
            new = tuple(v for v in fired if (v.contract_id, v.guarantee) not in old)
            if not new:
                return decision
            action = "observed" if self.mode == "observe" else "warned"
            d = replace(
                d0,
                allowed=True,
                action=action,
                violations=new,
                would_have="warned" if self.mode == "observe" else None,
                redirected_to=None,
                start_ns=now,
                end_ns=time.time_ns(),
            )
            only = tuple(dict.fromkeys(v.contract_id for v in new))
            self._record(d, only=only, raw_args=raw)
            return d

    def finish(self) -> list[Decision]:
        """Liveness violations open at the session end; flushes the exporter."""
        with self._lock:
            out: list[Decision] = []
            last = self._last_logged
            for c, text, kind, check in self._open_at_end():
                v = Violation(
                    c.id,
                    text,
                    kind,
                    c.severity,
                    c.strategy.kind,
                    f"{text} left open at the end (obligation from step {check.opened})",
                    c.strategy.safe_tool,
                )
                now = time.time_ns()
                d = Decision(
                    allowed=True,
                    action="observed" if self.mode == "observe" else "warned",
                    tool=None,
                    args=None,
                    violations=(v,),
                    position=max(self.position - 1, 0),
                    would_have="warned" if self.mode == "observe" else None,
                    seq=last.seq if last is not None else -1,
                    ts=last.ts if last is not None else self._stamp(now),
                    checked=(c.id,),
                    mode=self.mode,
                    start_ns=now,
                    end_ns=now,
                )
                out.append(d)
                self.decisions.append(d)
                if self._log is not None and last is not None:
                    self._log.write(
                        d, self._texts, tool=last.tool, conversation_id=self.conversation_id
                    )
                if self.exporter is not None:
                    self.exporter.export(sp.Turn(d, self.agent_id, event_type="session_end"))
            if self.exporter is not None:
                self.exporter.flush()
            if self._log is not None:
                self._log.close()
            return out

    def _open_at_end(self) -> list[tuple[Contract, str, str, Check]]:
        """(contract, clause, kind, check) of every obligation open at the end, contract order."""
        found: list[tuple[int, Contract, str, str, Check]] = []
        for k, (c, text) in enumerate(self._bank_meta):
            check = self.bank.liveness(k)
            if check is not None:
                found.append((self._order[c.id], c, text, LIVENESS, check))
        for run in self.runs:
            for clause, check in run.finish():
                kind = ASSUMPTION if clause.kind == ASSUMPTION else LIVENESS
                found.append((self._order[run.contract.id], run.contract, clause.text, kind, check))
        found.sort(key=lambda x: x[0])
        return [x[1:] for x in found]

    def close(self) -> None:
        """Close the session log and stop an exporter the guard created itself."""
        if self._log is not None:
            self._log.close()
        if self.exporter is not None and self._owns_exporter:
            self.exporter.shutdown()

    def __enter__(self) -> Guard:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.finish()
        finally:
            self.close()

    # ------------------------------------------------------------ records

    def _record(
        self,
        d: Decision,
        only: Sequence[str] | None = None,
        raw_args: Any = None,
        logged: bool = False,
    ) -> None:
        if not logged:
            self.decisions.append(d)
        if self._log is not None:
            self._log.write(d, self._texts, only=only, conversation_id=self.conversation_id)
            if d.appended:
                self._last_logged = d
        if self.exporter is not None:
            self.exporter.export(self._turn(d, only, raw_args))

    def _turn(self, d: Decision, only: Sequence[str] | None, raw: Any) -> sp.Turn:
        checks = contract_checks(self.contracts, self._texts, d, only)
        return sp.Turn(d, self.agent_id, checks, self.conversation_id, raw_args=raw)

    def guarded(self, fn: Any = None, **kw: Any) -> Any:
        """Decorator: guard every call of a sync or async tool function (``wrap.guarded``)."""
        return _guarded(self, fn, **kw)
