"""One short human sentence per violation ("transfer called at step 4 before any call of verify").

Evidence is built from the contract (pattern name and arguments) and the
offending event's tool name and step only: argument values and outputs
never enter it, so it cannot leak a secret from a trace. Tool names are
untrusted, so control characters are dropped and every piece is capped.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sponsio_audit.ltl.contract import Contract

MAX_EVIDENCE = 300
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def clean(text: object, limit: int = 80) -> str:
    """``text`` without control/bidi characters, cut to ``limit`` characters with an ellipsis."""
    s = _CONTROL.sub("", str(text))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _arg(args: tuple[object, ...], i: int, default: object = "?") -> str:
    if i >= len(args):
        return clean(default)
    a = args[i]
    if isinstance(a, (list, tuple)):
        return clean(", ".join(str(x) for x in a))
    return clean(a)


Sentence = Callable[[tuple[object, ...], str, str, str, str], str]

# pattern -> (args, tool, step, opened_step, opened_tool) -> sentence
_SENTENCES: dict[str, Sentence] = {
    "must_precede": lambda a, t, s, o, ot: (
        f"{t} called at step {s} before any call of {_arg(a, 0)}"
    ),
    "must_confirm": lambda a, t, s, o, ot: (
        f"{t} called at step {s} without a prior {_arg(a, 1, 'confirm_' + _arg(a, 0))}"
    ),
    "always_followed_by": lambda a, t, s, o, ot: (
        f"{ot} called at step {o} and never followed by {_arg(a, 1)}"
    ),
    "required_steps": lambda a, t, s, o, ot: (
        f"{ot} called at step {o} but a required step ({_arg(a, 1)}) never followed"
    ),
    "no_reversal": lambda a, t, s, o, ot: f"{t} called at step {s} after {_arg(a, 0)}",
    "mutual_exclusion": lambda a, t, s, o, ot: (
        f"{t} called at step {s} although {_arg(a, 0)} and {_arg(a, 1)} must not both be called"
    ),
    "segregation_of_duty": lambda a, t, s, o, ot: (
        f"{t} called at step {s} by an agent that also called the other of "
        f"{_arg(a, 0)} / {_arg(a, 1)}"
    ),
    "rate_limit": lambda a, t, s, o, ot: (
        f"{t} called at step {s}: more than {_arg(a, 1)} calls of {_arg(a, 0)}"
    ),
    "idempotent": lambda a, t, s, o, ot: f"{t} called again at step {s} (at most once)",
    "bounded_retry": lambda a, t, s, o, ot: (
        f"{t} called at step {s}: more than {_arg(a, 1)} retries in a row"
    ),
    "loop_detection": lambda a, t, s, o, ot: (
        f"{t} called at step {s}: more than {_arg(a, 1)} calls in a row"
    ),
    "cooldown": lambda a, t, s, o, ot: (
        f"{t} called at step {s} within {_arg(a, 1)} steps of the previous call"
    ),
    "deadline": lambda a, t, s, o, ot: (
        f"{_arg(a, 0)} was not followed by {_arg(a, 1)} within {_arg(a, 2)} steps "
        f"(checked at step {s})"
    ),
    "workflow_step": lambda a, t, s, o, ot: (
        f"step {s} ({t}) is not {_arg(a, 1)}, which must directly follow {_arg(a, 0)}"
    ),
    "tool_allowlist": lambda a, t, s, o, ot: f"{t} called at step {s} is not on the allowlist",
    "redirect_to_safe": lambda a, t, s, o, ot: f"{t} called at step {s}; use {_arg(a, 1)} instead",
    "requires_permission": lambda a, t, s, o, ot: (
        f"{t} called at step {s} without permission {_arg(a, 1)}"
    ),
    "no_data_leak": lambda a, t, s, o, ot: f"data of {_arg(a, 0)} reached {_arg(a, 1)} at step {s}",
    "arg_blacklist": lambda a, t, s, o, ot: (
        f"{t} called at step {s} with {_arg(a, 1)} matching a forbidden pattern"
    ),
    "arg_allowlist": lambda a, t, s, o, ot: (
        f"{t} called at step {s} with {_arg(a, 1)} matching no allowed pattern"
    ),
    "scope_limit": lambda a, t, s, o, ot: (
        f"{t} called at step {s} with a path outside {_arg(a, 1)}"
    ),
    "token_budget": lambda a, t, s, o, ot: f"token count exceeded {_arg(a, 0)} at step {s}",
    "no_pii": lambda a, t, s, o, ot: f"model output at step {s} contains PII",
    "prompt_injection_marker": lambda a, t, s, o, ot: (
        f"model input at step {s} contains a prompt-injection marker"
    ),
    "latency_budget": lambda a, t, s, o, ot: f"{t} at step {s} took longer than {_arg(a, 1)} ms",
}


def describe(
    contract: Contract,
    guarantee: int,
    kind: str,
    *,
    seq: int | str | None,
    tool: str | None,
    opened_seq: int | None = None,
    opened_tool: str | None = None,
) -> str:
    """The evidence sentence for one offending event of a violated guarantee."""
    clause = contract.guarantees[guarantee]
    t = clean(tool) if tool else "event"
    s = "?" if seq is None else str(seq)
    o = "?" if opened_seq is None else str(opened_seq)
    ot = clean(opened_tool) if opened_tool else "an event"
    if kind == "assumption":
        text = f"assumption of the contract does not hold (checked at step {s})"
    elif clause.pattern in _SENTENCES:
        text = _SENTENCES[clause.pattern](tuple(clause.args), t, s, o, ot)
    elif kind == "liveness":
        where = f" opened at step {o} ({ot})" if opened_seq is not None else ""
        text = f"obligation{where} still open when the trace ended: {clause.text}"
    else:
        what = clause.desc or contract.description or clause.text
        text = f"{t} at step {s} violates: {what}"
    return clean(text, MAX_EVIDENCE)
