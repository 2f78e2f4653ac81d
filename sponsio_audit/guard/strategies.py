"""What the guard does when contracts fire: decisions and strategies (SEMANTICS.md §4.2).

Per contract the strategy is one of:

- **block**: the call does not run and its event is not appended (the
  grounder and every monitor roll back), so later decisions equal an audit
  of the events the guard let through;
- **escalate**: a callback gets the provisional decision and returns True
  to allow; no callback, a False answer or an exception deny (= block);
- **redirect**: the contract's safe tool runs instead (``redirected_to``);
  the original event is not appended (the safe call is guarded as an event
  of its own by ``Guard.guarded``);
- **warn**: the call runs, its event is appended, the violation is recorded.

When several contracts fire on one call the strictest wins:
block > escalate > redirect > warn. An approved escalation only settles the
escalating contracts: a redirect or warning that also fired still applies.
A redirect without a safe tool falls back to block.

In **observe** mode nothing is enforced: every call is allowed and appended,
and ``would_have`` says what enforce mode would have done (escalations are
reported as ``escalated`` without asking the callback).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any, NamedTuple

ACTIONS = ("allowed", "blocked", "escalated", "warned", "redirected", "observed")
RANK = {"block": 4, "escalate": 3, "redirect": 2, "warn": 1}
"""Strictness of strategies: the highest rank among the contracts that fired wins."""


class Violation(NamedTuple):
    """One failed clause behind a decision."""

    contract_id: str
    guarantee: str  # the clause in the text syntax
    kind: str  # guarantee, assumption or liveness
    severity: str  # high, medium, low
    strategy: str  # block, escalate, warn, redirect
    message: str
    safe_tool: str | None = None


@dataclass(frozen=True)
class Decision:
    """The guard's answer for one tool call (or, from ``finish``, for the session end).

    ``args`` are redacted. ``position`` is the event's position in the
    guard's view (the position it would have had when not appended).
    ``seq`` numbers the calls of the session, blocked ones included; ``ts``
    is the ISO-8601 UTC time written to the session log. ``checked`` lists
    the ids of the contracts evaluated. ``would_have`` is set in observe mode.
    """

    allowed: bool
    action: str
    tool: str | None
    args: Any
    violations: tuple[Violation, ...] = ()
    redirected_to: str | None = None
    position: int = 0
    would_have: str | None = None
    seq: int = 0
    ts: str = ""
    checked: tuple[str, ...] = ()
    mode: str = "enforce"
    start_ns: int = 0
    end_ns: int = 0

    @property
    def appended(self) -> bool:
        """True when the event entered the guard's trace (the call ran as asked)."""
        return self.action not in ("blocked", "redirected")


def _fast_init(cls: type) -> None:
    """Give a frozen dataclass an ``__init__`` that fills ``__dict__`` in one go.

    The generated one calls ``object.__setattr__`` once per field, which costs
    the guard more than the rest of an allowed call; this one takes the same
    parameters (names, order, defaults), so construction, ``replace``, equality
    and the frozen behaviour after construction are unchanged.
    """
    params, ns = [], {}
    for f in fields(cls):
        if f.default_factory is not MISSING:
            raise TypeError("_fast_init: default factories are not supported")
        if f.default is MISSING:
            params.append(f.name)
        else:
            ns[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
    names = ", ".join(f"{f.name}={f.name}" for f in fields(cls))
    src = f"def __init__(self, {', '.join(params)}):\n    self.__dict__.update({names})\n"
    exec(src, ns)
    ns["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = ns["__init__"]  # type: ignore[misc]


_fast_init(Decision)


class ToolBlocked(RuntimeError):
    """Raised by ``Guard.guarded`` when a call is not allowed; carries the ``Decision``."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        why = "; ".join(f"{v.contract_id}: {v.message}" for v in decision.violations)
        super().__init__(f"tool {decision.tool!r} {decision.action}: {why or 'denied'}")


Escalate = Callable[[Decision], bool]


def _enforced(fired: Sequence[Violation]) -> tuple[str, str | None]:
    """(action, safe tool) enforce mode takes for ``fired``, escalations not yet asked."""
    if not fired:
        return "allowed", None
    top = fired[0] if len(fired) == 1 else max(fired, key=lambda v: RANK.get(v.strategy, 4))
    kind = top.strategy if top.strategy in RANK else "block"
    if kind == "redirect":
        if top.safe_tool is None:
            return "blocked", None
        return "redirected", top.safe_tool
    return {"block": "blocked", "escalate": "escalated", "warn": "warned"}[kind], None


def outcome(
    fired: Sequence[Violation], mode: str
) -> tuple[bool, str, str | None, str | None] | None:
    """(allowed, action, redirected_to, would_have) of the decision on ``fired``, or None
    when an escalation has to be asked first (``decide``). ``would_have`` is only set in
    observe mode (in enforce mode the decision keeps its own)."""
    if mode == "observe":
        would, _ = _enforced(fired)
        return True, "observed" if fired else "allowed", None, would if fired else None
    action, safe = _enforced(fired)
    if action == "escalated":
        return None
    return action in ("allowed", "warned", "escalated"), action, safe, None


def decide(
    base: Decision, fired: Sequence[Violation], mode: str, escalate: Escalate | None
) -> Decision:
    """Turn the violations that fired on one call into the final decision (module doc)."""
    fired = tuple(fired)
    got = outcome(fired, mode)
    if got is not None:
        allowed, action, safe, would = got
        if mode == "observe":
            base = replace(base, would_have=would)
        return replace(base, allowed=allowed, action=action, violations=fired, redirected_to=safe)
    action, safe = _enforced(fired)
    if action == "escalated":
        provisional = replace(base, allowed=False, action="escalated", violations=fired)
        ok = False
        if escalate is not None:
            try:
                ok = bool(escalate(provisional))
            except Exception:  # a failing approver denies
                ok = False
        if not ok:
            fired = tuple(
                v._replace(message=v.message + " (escalation denied)")
                if v.strategy == "escalate"
                else v
                for v in fired
            )
            return replace(base, allowed=False, action="blocked", violations=fired)
        rest = [v for v in fired if v.strategy not in ("escalate", "block")]
        action, safe = _enforced(rest)
        if action == "allowed":
            action = "escalated"
    allowed = action in ("allowed", "warned", "escalated")
    return replace(base, allowed=allowed, action=action, violations=fired, redirected_to=safe)


def line_result(decision: Decision, contract_id: str | None) -> tuple[str, str]:
    """(result, message) of one session-log line: the contract's own outcome in ``decision``."""
    mine = [v for v in decision.violations if v.contract_id == contract_id]
    if not mine:
        return "allowed", ""
    message = "; ".join(f"{v.kind} violated: {v.message}" for v in mine)
    if decision.mode == "observe":
        return "observed", message
    action = decision.action
    if action == "blocked":
        return "blocked", message
    if action == "redirected":
        return "redirected", message
    if any(v.strategy == "escalate" for v in mine):
        return "escalated", message
    return "warned", message
