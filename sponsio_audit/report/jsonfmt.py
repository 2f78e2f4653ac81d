"""The ``json`` format: one document, schema ``sponsio-audit/report/1``.

The shape is fixed by ``report.schema.json`` (JSON Schema 2020-12, shipped
with the package; tests validate every output against it). Top level:

- ``schema``: ``"sponsio-audit/report/1"``; a change that removes or
  retypes a field bumps the number, adding optional fields does not;
- ``summary``: input and verdict totals, ``violations`` (after a baseline)
  and ``suppressed`` (hidden by it);
- ``inputs``: ``files`` (path, format, bytes, sha256, records, skipped)
  and ``skipped`` (file, record, reason; record 0 is the whole file);
- ``contracts``: id, agent, description, severity, strategy, guarantees
  (text, pattern, skipped reason) and per-contract verdict counts;
- ``violations``: one per violated (trace, contract, guarantee), with the
  blamed event (step, span, tool, agent, file, record), the evidence, the
  step that opened a liveness obligation, every further offending event,
  and the baseline fingerprint;
- ``guard_decisions``: the guard's recorded decisions (session logs and
  Sponsio verdict spans), one entry per contract id (null: calls no
  contract checked) with ``results`` (counts of blocked, escalated,
  warned, redirected, observed, allowed, then any other recorded result)
  and ``total``; empty when the inputs hold no decisions.

Strings are as recorded (JSON escaping makes them inert); evidence never
contains argument values (``evidence`` module).
"""

from __future__ import annotations

import json
from typing import Any

from sponsio_audit.report import baseline
from sponsio_audit.report.data import ReportData

SCHEMA = "sponsio-audit/report/1"


def _event(v: dict[str, Any]) -> dict[str, Any]:
    return {
        "seq": v["seq"],
        "span_id": v["span_id"],
        "tool": v["tool"],
        "agent": v["agent"],
        "file": v["path"],
        "record": v["record"],
        "evidence": v["evidence"],
    }


def violations(data: ReportData) -> list[dict[str, Any]]:
    """The ``violations`` array (report order)."""
    others: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for v in data.violations:
        if not v["blamed"]:
            others.setdefault((v["trace_id"], v["contract_id"], v["guarantee"]), []).append(v)
    out = []
    for v in data.blamed:
        key = (v["trace_id"], v["contract_id"], v["guarantee"])
        out.append(
            {
                "trace_id": v["trace_id"],
                "contract_id": v["contract_id"],
                "guarantee": v["guarantee"],
                "guarantee_text": v["guarantee_text"],
                "kind": v["kind"],
                "severity": v["severity"],
                "strategy": v["strategy"],
                "blamed": _event(v),
                "opened_seq": v["opened_seq"],
                "offending": [_event(o) for o in sorted(others.get(key, []), key=_seq)],
                "fingerprint": baseline.fingerprint(v, data.contract(v["contract_id"])),
            }
        )
    return out


def _seq(v: dict[str, Any]) -> int:
    return int(v["seq"]) if v["seq"] is not None else -1


def document(data: ReportData) -> dict[str, Any]:
    """The report as a JSON-ready dict."""
    contracts = []
    for c, row in zip(data.contracts, data.per_contract, strict=True):
        contracts.append(
            {
                "id": c["id"],
                "agent": c["agent"],
                "description": c["description"] or "",
                "severity": c["severity"],
                "strategy": c["strategy"],
                "safe_tool": c["safe_tool"],
                "source": c["source"],
                "guarantees": [
                    {"index": i, "text": text, "pattern": p, "skipped": s}
                    for i, (text, p, s) in enumerate(
                        zip(c["guarantees"], c["patterns"], c["skipped"], strict=True)
                    )
                ],
                "verdicts": row["verdicts"],
                "violations": row["violations"],
                "traces_violated": row["traces_violated"],
                "events_blamed": row["events_blamed"],
            }
        )
    files = [
        {k: f[k] for k in ("file_id", "path", "format", "bytes", "sha256", "records", "skipped")}
        for f in data.files
    ]
    return {
        "schema": SCHEMA,
        "summary": {
            **data.totals,
            "suppressed": data.suppressed,
            "verdicts": data.verdict_counts,
        },
        "inputs": {"files": files, "skipped": data.skipped},
        "contracts": contracts,
        "violations": violations(data),
        "guard_decisions": [
            {"contract_id": d["contract_id"], "results": dict(d["results"]), "total": d["total"]}
            for d in data.guard_decisions
        ],
    }


def render(data: ReportData) -> str:
    """The JSON text (2-space indent, stable key order as built)."""
    return json.dumps(document(data), indent=2, ensure_ascii=False) + "\n"
