"""Helpers of ``Guard`` kept out of its module: loading, redaction, result text, export checks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sponsio_audit.guard import spans as sp
from sponsio_audit.guard.strategies import Decision
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.redact import REDACTED, SECRET_KEY, redact_args

_SECRET_KEYS: dict[Any, bool] = {}  # key → whether SECRET_KEY matches it (bounded memo)
_PLAIN = frozenset({int, float, bool, type(None)})  # redact_args returns these as they are


def redact(obj: Any) -> Any:
    """``redact_args(obj)``, with the key test memoised for the usual flat args dict."""
    if obj.__class__ is not dict:
        return redact_args(obj)
    out = {}
    for k, v in obj.items():
        secret = _SECRET_KEYS.get(k)
        if secret is None:
            secret = isinstance(k, str) and SECRET_KEY.search(k) is not None
            if len(_SECRET_KEYS) < 4096:
                _SECRET_KEYS[k] = secret
        out[k] = REDACTED if secret else v if v.__class__ in _PLAIN else redact_args(v)
    return out


def load(contracts: Sequence[Contract] | str | Path, agent_id: str) -> tuple[list[Contract], Any]:
    """The contracts (from a list, or a config file) and the agent's configured permissions."""
    if isinstance(contracts, (str, Path)):
        from sponsio_audit.config import load_config

        cfg = load_config(contracts)
        agent = getattr(cfg, "agents", {}).get(agent_id)
        perms = getattr(agent, "permissions", None) if agent is not None else None
        return list(cfg.contracts), perms
    return list(contracts), None


def result_text(result: Any) -> str | None:
    """A tool result as the event's content text (non-strings as JSON)."""
    if result is None or isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


def contract_checks(
    contracts: Sequence[Contract],
    texts: dict[str, list[str]],
    d: Decision,
    only: Sequence[str] | None,
) -> tuple[sp.ContractCheck, ...]:
    """The per-contract checks of one decision's exported turn (all, or ``only`` these ids)."""
    checks = []
    for c in contracts:
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
                guarantees=tuple((t, t in bad) for t in texts[c.id]),
                violations=mine,
                eval_pos=d.position,
            )
        )
    return tuple(checks)
