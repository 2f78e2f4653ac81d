"""The ``json`` format: one document, schema ``sponsio-audit/report/1``, version ``1.2``.

The shape is fixed by ``report.schema.json`` (JSON Schema 2020-12, shipped
with the package; tests validate every output against it). Top level:

- ``schema``: ``"sponsio-audit/report/1"``; a change that removes or
  retypes a field bumps the number, adding fields does not;
- ``schema_version``: ``"1.2"``, the minor number counting additions
  (1.1: ``provenance``, ``undecided``, each contract's ``file`` and
  ``line``; 1.2: ``provenance.warnings``);
- ``provenance``: tool and semantics version, time of the run, command
  line, each contract file or pack with its sha256 and contract count,
  each input file with its sha256 and counts (records, skipped, spans),
  and the audit's ``warnings`` (a worker process that died);
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
- ``undecided``: one entry per (trace, contract, guarantee) whose verdict
  is ``unverifiable`` (the recorded facts cannot decide it) or
  ``skipped`` (not evaluated offline), with the recorded ``reason`` (which
  atom lacked which field at which step, and how to record it) or null;
- ``guard_decisions``: the guard's recorded decisions (session logs and
  Sponsio verdict spans), one entry per contract id (null: calls no
  contract checked) with ``results`` (counts of blocked, escalated,
  warned, redirected, observed, allowed, then any other recorded result)
  and ``total``; empty when the inputs hold no decisions.

Strings are as recorded (JSON escaping makes them inert); evidence never
contains argument values (``evidence`` module).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import orjson

from sponsio_audit.report import baseline, jsonarrays, jsonenc
from sponsio_audit.report.data import ReportData
from sponsio_audit.report.options import RenderOptions
from sponsio_audit.report.xmlchars import legal

SCHEMA = "sponsio-audit/report/1"
SCHEMA_VERSION = "1.2"


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


def document(data: ReportData, rows: bool = True) -> dict[str, Any]:
    """The report as a JSON-ready dict (``rows=False``: the violations array left to
    ``render``, a placeholder string in its place)."""
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
                "file": c.get("file"),
                "line": c.get("line"),
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
    undecided = [
        {k: u.get(k) for k in ("trace_id", "contract_id", "guarantee", "verdict", "reason")}
        for u in data.undecided
    ]
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "provenance": data.provenance,
        "summary": {
            **data.totals,
            "suppressed": data.suppressed,
            "verdicts": data.verdict_counts,
        },
        "inputs": {"files": files, "skipped": data.skipped},
        "contracts": contracts,
        "violations": violations(data) if rows else _SLOT,
        "undecided": undecided,
        "guard_decisions": [
            {"contract_id": d["contract_id"], "results": dict(d["results"]), "total": d["total"]}
            for d in data.guard_decisions
        ],
    }


def render(data: ReportData, options: RenderOptions | None = None) -> str:
    """The JSON text (2-space indent, stable key order as built): the stdlib's text
    (``chunks`` decoded)."""
    return b"".join(chunks(data, options)).decode("utf-8")


def chunks(data: ReportData, options: RenderOptions | None = None) -> Iterable[bytes | memoryview]:
    """The JSON report as UTF-8 bytes in pieces to write one after the other: the stdlib's
    bytes, by orjson; the violations array written from the Arrow table (``jsonarrays``)
    a piece at a time, never joined or decoded to a Python string (a report may be
    hundreds of MB)."""
    text = jsonenc.dumps(document(data, rows=False))
    slot = f"{orjson.dumps(_SLOT).decode()}"
    if text.count(slot) != 1:  # the placeholder also in trace content: the slow way
        return [(legal(jsonenc.dumps(document(data))) + "\n").encode("utf-8")]
    array = jsonarrays.violations_json(data.violation_table, data.contract, indent=4)
    head, _, tail = text.partition(slot)
    return itertools.chain(
        [legal(head).encode("utf-8")], array, [(legal(tail) + "\n").encode("utf-8")]
    )


_SLOT = "\ue000sponsio-audit violations\ue001"
"""Stands for the violations array in the document until its text is joined in."""
