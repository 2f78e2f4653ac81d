"""One short human sentence per violation ("transfer called at step 4 before any call of verify").

The sentence of a pattern lives in its row (``PatternSpec.evidence``; an
alias inherits its target's). Evidence is built from the contract (pattern
name and arguments) and the offending event's tool name and step only:
argument values and outputs never enter it, so it cannot leak a secret
from a trace. Tool names are untrusted, so control characters are dropped
and every piece is capped.
"""

from __future__ import annotations

from sponsio_audit.ltl.contract import Contract
from sponsio_audit.ltl.patterns.registry import lookup
from sponsio_audit.redact import clean
from sponsio_audit.vocab import ASSUMPTION, LIVENESS

MAX_EVIDENCE = 300


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
    spec = lookup(clause.pattern) if clause.pattern else None
    if kind == ASSUMPTION:
        text = f"assumption of the contract does not hold (checked at step {s})"
    elif spec is not None and spec.evidence is not None:
        text = spec.evidence(tuple(clause.args), t, s, o, ot)
    elif kind == LIVENESS:
        where = f" opened at step {o} ({ot})" if opened_seq is not None else ""
        text = f"obligation{where} still open when the trace ended: {clause.text}"
    else:
        what = clause.desc or contract.description or clause.text
        text = f"{t} at step {s} violates: {what}"
    return clean(text, MAX_EVIDENCE)
