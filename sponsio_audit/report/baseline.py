"""Baselines: accept today's violations, fail only on new ones.

A violation's **fingerprint** is the sha256 (hex) of the four lines

    contract id
    trace id
    tool of the blamed event ("" when none)
    evidence class

where the **evidence class** is ``pattern:<name>#<guarantee index>`` when
the violated guarantee comes from a pattern (the sentence of a pattern is
fully determined by it, the tool and the step), and otherwise the evidence
sentence with every run of digits replaced by ``#`` (so a step number that
moves when unrelated events are added does not make a known violation look
new). Fingerprints are stable across rescans of the same traces, across
machines and across report formats.

The baseline file is JSON (``"schema": "sponsio-audit/baseline/1"``) with
the sorted fingerprints and, for people reading it, the contract, trace,
tool and class of each.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from sponsio_audit.report.data import ReportData

SCHEMA = "sponsio-audit/baseline/1"
_DIGITS = re.compile(r"\d+")


class BaselineError(ValueError):
    """A baseline file that cannot be read."""


def evidence_class(violation: dict[str, Any], contract: dict[str, Any]) -> str:
    """The evidence class of a violation row (see module docstring)."""
    g = int(violation["guarantee"])
    patterns = contract.get("patterns") or []
    pattern = patterns[g] if g < len(patterns) else None
    if pattern:
        return f"pattern:{pattern}#{g}"
    return _DIGITS.sub("#", str(violation["evidence"]))


def fingerprint(violation: dict[str, Any], contract: dict[str, Any]) -> str:
    """The fingerprint of one violation (a blamed row of the ``violations`` table)."""
    parts = (
        str(violation["contract_id"]),
        str(violation["trace_id"]),
        str(violation["tool"] or ""),
        evidence_class(violation, contract),
    )
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def entries(data: ReportData) -> list[dict[str, str]]:
    """One baseline entry per violation of ``data`` (sorted by fingerprint, no repeats)."""
    out: dict[str, dict[str, str]] = {}
    for v in data.blamed:
        c = data.contract(v["contract_id"])
        fp = fingerprint(v, c)
        out[fp] = {
            "fingerprint": fp,
            "contract_id": str(v["contract_id"]),
            "trace_id": str(v["trace_id"]),
            "tool": str(v["tool"] or ""),
            "class": evidence_class(v, c),
        }
    return [out[k] for k in sorted(out)]


def write(path: str | Path, data: ReportData) -> int:
    """Write the baseline of ``data`` to ``path``; the number of fingerprints."""
    items = entries(data)
    doc = {"schema": SCHEMA, "violations": items}
    Path(path).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return len(items)


def read(path: str | Path) -> set[str]:
    """The fingerprints recorded in a baseline file."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BaselineError(f"{path}: cannot read baseline: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise BaselineError(f"{path}: not a sponsio-audit baseline (schema {SCHEMA!r})")
    items = doc.get("violations")
    if not isinstance(items, list):
        raise BaselineError(f"{path}: 'violations' must be a list")
    return {str(i["fingerprint"]) for i in items if isinstance(i, dict) and "fingerprint" in i}


def apply(data: ReportData, known: set[str]) -> ReportData:
    """``data`` without the violations whose fingerprint is in ``known`` (counted as suppressed)."""
    keys: set[tuple[str, str, int]] = set()
    for v in data.blamed:
        if fingerprint(v, data.contract(v["contract_id"])) in known:
            keys.add((v["trace_id"], v["contract_id"], v["guarantee"]))
    return data.without(keys, len(keys)) if keys else data
