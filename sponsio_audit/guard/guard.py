"""The hook-side guard (Model A): contracts enforced on tool calls as they happen.

``Guard.guard_before(tool, args)`` runs before the tool: it builds the
``tool_call`` event, grounds it with one online ``Grounder`` shared by all
contracts, steps every applicable contract (``runtime.ContractRun``) and
decides (``strategies.decide``). A call that is blocked or redirected is not
appended: the grounder and every contract roll back, so each later decision
equals an audit of the events let through (SEMANTICS.md §4.2). Cost per
call is O(total formula size): past operators and counters keep constant
state and nothing re-reads the prefix.

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

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sponsio_audit.atoms.online import Grounder
from sponsio_audit.event import Event
from sponsio_audit.ltl.contract import Contract

from . import session_log as sl
from . import spans as sp
from .otlp_export import OtlpHttpExporter
from .past import PastBank
from .redact import redact_args
from .runtime import ContractRun, is_plain, unsupported
from .strategies import Decision, Escalate, Violation, decide
from .wrap import guarded as _guarded

_OUTPUT_ATOMS = frozenset({"output_has", "latency_exceeds"})


def _load(contracts: Sequence[Contract] | str | Path, agent_id: str) -> tuple[list[Contract], Any]:
    if isinstance(contracts, (str, Path)):
        from sponsio_audit.config import load_config

        cfg = load_config(contracts)
        agent = getattr(cfg, "agents", {}).get(agent_id)
        perms = getattr(agent, "permissions", None) if agent is not None else None
        return list(cfg.contracts), perms
    return list(contracts), None


def _text(result: Any) -> str | None:
    if result is None or isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


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
        loaded, cfg_perms = _load(contracts, agent_id)
        self.agent_id = agent_id
        self.mode = mode
        self.escalate = escalate
        self.tools = dict(tools or {})
        self.conversation_id = conversation_id
        self.skipped: list[tuple[str, str]] = []
        applicable: list[Contract] = []
        for c in loaded:
            if c.agent not in (agent_id, "*") or "tool_call" not in c.view_types():
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
        self.grounder = Grounder(list(atoms), perms)
        index = {a: i for i, a in enumerate(self.grounder.atoms)}
        # plain safety contracts share one compiled PastBank; the rest run one by one
        self._bank_meta: list[tuple[Contract, str]] = []
        bank_formulas = []
        self.runs: list[ContractRun] = []
        for c in applicable:
            if is_plain(c):
                for g in c.guarantees:
                    if g.skipped is None:
                        self._bank_meta.append((c, g.text))
                        bank_formulas.append(g.formula.arg)  # type: ignore[union-attr]
            else:
                self.runs.append(ContractRun(c, index))
        self.bank = PastBank(bank_formulas, index) if bank_formulas else None
        self._bank_saved: list[Any] | None = None
        self._needs_output = any(a.name in _OUTPUT_ATOMS for a in atoms)
        self._lock = threading.Lock()
        self.position = 0  # events appended
        self._seq = 0
        self._last_us = 0
        self._sec, self._sec_text = -1, ""
        self._last: tuple[Decision, Event] | None = None  # last appended, for guard_after
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
        us = max(ns // 1000, self._last_us + 1)  # unique, increasing: the log groups by ts
        self._last_us = us
        sec, frac = divmod(us, 1_000_000)
        if sec != self._sec:  # strftime once per second, not per call
            self._sec, self._sec_text = sec, sl.iso_utc(sec * 10**9)[:19]
        return f"{self._sec_text}.{frac:06d}Z"

    def _step(self, event: Event, pos: int) -> list[Violation]:
        val = self.grounder.ground(event)
        values = list(val.values())  # the grounder's atom order (its ``atoms``)
        fired: list[Violation] = []
        if self.bank is not None:
            self._bank_saved = self.bank.state.copy()
            for k in self.bank.step(values):
                c, text = self._bank_meta[k]
                fired.append(self._violation(c, text, "guarantee", pos, event.tool))
        for run in self.runs:
            for h in run.step(val, values, pos):
                fired.append(self._violation(run.contract, h.text, h.kind, pos, event.tool))
        if len(fired) > 1:  # contract order: ties between equally strict contracts go to the first
            fired.sort(key=lambda v: self._order[v.contract_id])
        return fired

    @staticmethod
    def _violation(c: Contract, text: str, kind: str, pos: int, tool: str | None) -> Violation:
        return Violation(
            c.id,
            text,
            kind,
            c.severity,
            c.strategy.kind,
            f"{text} is false at step {pos} (call of {tool})",
            c.strategy.safe_tool,
        )

    def _rollback(self) -> None:
        self.grounder.rollback()
        if self.bank is not None and self._bank_saved is not None:
            self.bank.state = self._bank_saved
            self._bank_saved = None
        for run in self.runs:
            run.rollback()

    def guard_before(self, tool: str, args: Mapping[str, Any] | None = None) -> Decision:
        """Decide on a call of ``tool`` with ``args`` before it runs (module doc)."""
        with self._lock:
            t0 = time.time_ns()
            pos, seq = self.position, self._seq
            self._seq += 1
            event = Event(
                type="tool_call",
                tool=tool,
                args=dict(args) if args is not None else None,
                agent=self.agent_id,
                start_ns=t0,
                seq=pos,
                conversation_id=self.conversation_id,
            )
            fired = self._step(event, pos)
            base = Decision(
                allowed=True,
                action="allowed",
                tool=tool,
                args=redact_args(event.args),
                position=pos,
                seq=seq,
                ts=self._stamp(t0),
                checked=self.contract_ids,
                mode=self.mode,
                start_ns=t0,
                end_ns=0 if fired else time.time_ns(),
            )
            d = decide(base, fired, self.mode, self.escalate) if fired else base
            d = replace(d, end_ns=time.time_ns()) if fired else d
            if d.appended:
                self.position += 1
                self._last = (d, event)
            else:
                self._rollback()
                self._last = None
            self._record(d, raw_args=event.args)
            return d

    def guard_after(self, decision: Decision, result: Any) -> Decision:
        """Complete the call of ``decision`` with its ``result`` (warning-only, module doc)."""
        with self._lock:
            last = self._last
            if not self._needs_output or last is None or last[0].seq != decision.seq:
                return decision
            self._last = None
            d0, event = last
            now = time.time_ns()
            done = replace(event, content=_text(result), duration_ns=now - (event.start_ns or now))
            self._rollback()
            fired = self._step(done, d0.position)
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
            self._record(d, only=only, raw_args=event.args)
            return d

    def finish(self) -> list[Decision]:
        """Liveness violations open at the session end; flushes the exporter."""
        with self._lock:
            out: list[Decision] = []
            last = self._last_logged
            for run in self.runs:
                c = run.contract
                for clause, check in run.finish():
                    v = Violation(
                        c.id,
                        clause.text,
                        "assumption" if clause.kind == "assumption" else "liveness",
                        c.severity,
                        c.strategy.kind,
                        f"{clause.text} left open at the end (obligation from step {check.opened})",
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
    ) -> None:
        self.decisions.append(d)
        if self._log is not None:
            self._log.write(d, self._texts, only=only, conversation_id=self.conversation_id)
            if d.appended:
                self._last_logged = d
        if self.exporter is not None:
            self.exporter.export(self._turn(d, only, raw_args))

    def _turn(self, d: Decision, only: Sequence[str] | None, raw: Any) -> sp.Turn:
        checks = []
        for c in self.contracts:
            if only is not None and c.id not in only:
                continue
            mine = tuple(v for v in d.violations if v.contract_id == c.id)
            bad = {v.guarantee for v in mine}
            checks.append(
                sp.ContractCheck(
                    contract_id=c.id,
                    label=c.description,
                    source=c.source,
                    assumptions=tuple(a.text for a in c.assumptions if a.skipped is None),
                    assumption_holds=not any(v.kind == "assumption" for v in mine),
                    guarantees=tuple((t, t in bad) for t in self._texts[c.id]),
                    violations=mine,
                    eval_pos=d.position,
                )
            )
        return sp.Turn(d, self.agent_id, tuple(checks), self.conversation_id, raw_args=raw)

    def guarded(self, fn: Any = None, **kw: Any) -> Any:
        """Decorator: guard every call of a sync or async tool function (``wrap.guarded``)."""
        return _guarded(self, fn, **kw)
