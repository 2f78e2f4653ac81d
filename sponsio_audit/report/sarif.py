"""The ``sarif`` format: SARIF 2.1.0 for code-scanning dashboards (GitHub, Azure DevOps).

- one ``rule`` per contract (id = contract id; level from the severity:
  high → error, medium → warning, low → note);
- one ``result`` per violation, located at the **blamed** event; the other
  offending events of the same violated guarantee are ``relatedLocations``
  of that result (decision: one alert per violation, not per event, so a
  dashboard's counts equal the report's);
- a location's ``artifactLocation.uri`` is the input file's path as given
  on the command line; for line-based files (JSON lines, and every JSON
  format: record numbers are line numbers there) ``region.startLine`` is
  the record number; protobuf files get no region. Every location also
  carries a ``logicalLocation`` naming the trace and span
  (``trace/<trace id>/span/<span id>``);
- ``partialFingerprints["sponsioAudit/v1"]`` is the baseline fingerprint.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from sponsio_audit.redact import clean
from sponsio_audit.report import baseline
from sponsio_audit.report.data import ReportData

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"high": "error", "medium": "warning", "low": "note"}
_NO_LINES = {"otlp_proto", "unreadable", "unknown"}


def _uri(path: str | None) -> str:
    return quote((path or "").replace("\\", "/"), safe="/:._-~")


def _location(v: dict[str, Any], formats: dict[int, str], message: str | None = None) -> dict:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(v["path"])}}
    if v["record"] and formats.get(v["file_id"]) not in _NO_LINES:
        physical["region"] = {"startLine": int(v["record"])}
    loc: dict[str, Any] = {
        "physicalLocation": physical,
        "logicalLocations": [
            {
                "name": str(v["span_id"] or v["seq"]),
                "fullyQualifiedName": f"trace/{v['trace_id']}/span/{v['span_id'] or ''}",
                "kind": "object",
            }
        ],
    }
    if message is not None:
        loc["message"] = {"text": message}
    return loc


def document(data: ReportData, version: str = "0.1.0") -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict."""
    formats = {f["file_id"]: f["format"] for f in data.files}
    rules, index = [], {}
    for i, c in enumerate(data.contracts):
        index[c["id"]] = i
        rules.append(
            {
                "id": c["id"],
                "name": c["id"],
                "shortDescription": {"text": clean(c["description"] or c["id"], 300)},
                "fullDescription": {"text": clean("; ".join(c["guarantees"]), 1000)},
                "defaultConfiguration": {"level": LEVEL.get(c["severity"], "error")},
                "properties": {
                    "agent": c["agent"],
                    "severity": c["severity"],
                    "strategy": c["strategy"],
                },
            }
        )
    others: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for v in data.violations:
        if not v["blamed"]:
            others.setdefault((v["trace_id"], v["contract_id"], v["guarantee"]), []).append(v)
    results = []
    for v in data.blamed:
        related = [
            {"id": k + 1, **_location(o, formats, f"also offending: {clean(o['evidence'], 300)}")}
            for k, o in enumerate(others.get((v["trace_id"], v["contract_id"], v["guarantee"]), []))
        ]
        result: dict[str, Any] = {
            "ruleId": v["contract_id"],
            "ruleIndex": index.get(v["contract_id"], -1),
            "level": LEVEL.get(v["severity"], "error"),
            "message": {"text": clean(v["evidence"], 1000)},
            "locations": [_location(v, formats)],
            "partialFingerprints": {
                "sponsioAudit/v1": baseline.fingerprint(v, data.contract(v["contract_id"]))
            },
            "properties": {
                "trace_id": v["trace_id"],
                "step": v["seq"],
                "kind": v["kind"],
                "guarantee": v["guarantee"],
                "tool": v["tool"],
            },
        }
        if related:
            result["relatedLocations"] = related
        results.append(result)
    artifacts = [{"location": {"uri": _uri(f["path"])}} for f in data.files]
    driver = {
        "name": "sponsio-audit",
        "version": version,
        "informationUri": "https://sponsio.dev",
        "rules": rules,
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "artifacts": artifacts, "results": results}],
    }


def render(data: ReportData) -> str:
    """The SARIF JSON text."""
    return json.dumps(document(data), indent=2, ensure_ascii=False) + "\n"
