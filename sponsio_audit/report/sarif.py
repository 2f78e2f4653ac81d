"""The ``sarif`` format: SARIF 2.1.0 for code-scanning dashboards (GitHub, Azure DevOps).

Modelled on what GitHub code scanning documents it reads (and semgrep writes):

- one **rule** per contract: ``shortDescription`` (the contract's
  description), ``fullDescription`` (its formulas), ``help`` as text and
  Markdown (what each pattern means, how to fix a violation:
  ``rulehelp``), ``defaultConfiguration.level`` from the severity (high →
  error, medium → warning, low → note), ``properties.security-severity``
  (high 8.0, medium 5.0, low 2.0: inside GitHub's bands high 7.0–8.9,
  medium 4.0–6.9, low 0.1–3.9) and ``properties.tags`` (``security``,
  which GitHub needs to show that severity, the agent, the patterns);
- one **result** per violation. Its primary location is the contract's
  line in its ``sponsio.yaml`` (the rule is what lives in the repository;
  a repository-relative URI with ``uriBaseId`` ``%SRCROOT%``, ``origin``).
  The trace, span, input file and record of the blamed event are the
  location's ``logicalLocations`` and the first ``relatedLocations``; every
  further offending event of the same guarantee follows as a related
  location (one alert per violation, not per event, so a dashboard's
  count equals the report's; at most ``MAX_RELATED``, the message says how
  many more there are);
- ``partialFingerprints``: ``sponsioAudit/v1`` is the baseline fingerprint;
  ``primaryLocationLineHash`` is ``<fingerprint>:<n>``, n counting the
  results of that fingerprint in report order (GitHub's own ``hash:n``
  scheme for identical lines), so that GitHub neither merges two
  violations of one run (they share the contract's line, and a baseline
  fingerprint may leave out the trace) nor loses an alert's identity from
  one run to the next;
- a contract with no recorded file (given from Python) is placed on the
  blamed event's input file instead;
- skipped inputs, and the unverifiable and skipped verdicts grouped per
  contract and reason, are ``toolExecutionNotifications`` of the run
  (``undecided_notifications`` says why not results).

All text is ``text.xml_text``: no control characters, no code points that
JSON-reading XML tools choke on. Every ``message.text`` is ``plain``: a
plain-text message may embed links ``[text](id or URI)`` (§3.11.6), so
``[``, ``]`` and the backslash itself are backslash-escaped and trace
content (a tool named ``[fix](1)``) cannot link to a related location.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from sponsio_audit.report import baseline, origin, rulehelp
from sponsio_audit.report.data import ReportData
from sponsio_audit.report.options import RenderOptions
from sponsio_audit.report.text import NO_REASON, xml_safe, xml_text
from sponsio_audit.report.xmlchars import legal

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"high": "error", "medium": "warning", "low": "note"}
SECURITY_SEVERITY = {"high": "8.0", "medium": "5.0", "low": "2.0"}
INFORMATION_URI = "https://pypi.org/project/sponsio-audit/"
_NO_LINES = {"otlp_proto", "unreadable", "unknown"}
MAX_TRACE_IDS = 100
MAX_RELATED = 1000  # GitHub code scanning reads at most 1000 locations of a result


def plain(value: object, limit: int = 500) -> str:
    """Untrusted ``value`` as SARIF plain-text message text (``xml_text``, then ``\\``, ``[``
    and ``]`` escaped: no embedded link)."""
    text = xml_text(value, limit)
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _trace_location(v: dict[str, Any], formats: dict[int, str]) -> dict[str, Any]:
    line = v["record"] if formats.get(v["file_id"]) not in _NO_LINES else None
    return origin.location(v["path"], line)


def _skipped_location(s: dict[str, Any], formats: dict[int, str]) -> dict[str, Any]:
    line = s["record"] or None if formats.get(s["file_id"]) not in _NO_LINES else None
    return origin.location(s["path"], line)


def logical(v: dict[str, Any]) -> list[dict[str, Any]]:
    """The trace and span of a violation row as SARIF logical locations (span inside trace)."""
    tid, sid = xml_text(v["trace_id"], 300), xml_text(v["span_id"] or "", 100)
    trace = {"name": tid, "fullyQualifiedName": f"trace/{tid}", "kind": "namespace"}
    if not sid:
        return [trace]
    span = {
        "name": sid,
        "fullyQualifiedName": f"trace/{tid}/span/{sid}",
        "kind": "object",
        "parentIndex": 0,
    }
    return [trace, span]


def _event_text(v: dict[str, Any], role: str) -> str:
    where = f"{v['path']} record {v['record']}" if v["path"] else "no input file"
    return plain(
        f"{role}: step {v['seq']}, tool {v['tool'] or '-'}, span {v['span_id'] or '-'}, "
        f"{where}: {v['evidence']}",
        600,
    )


def rule(c: dict[str, Any]) -> dict[str, Any]:
    """The SARIF ``reportingDescriptor`` of one contract row."""
    tags = ["security", "sponsio-audit", f"agent:{c['agent']}"]
    tags += sorted({f"pattern:{p}" for p in c["patterns"] if p})
    return {
        "id": xml_text(c["id"], 300),
        "name": xml_text(c["id"], 300),
        "shortDescription": {"text": xml_text(c["description"] or c["id"], 300)},
        "fullDescription": {"text": xml_text("; ".join(c["guarantees"]) or c["id"], 1000)},
        "help": {
            "text": xml_safe(rulehelp.text(c)),
            "markdown": xml_safe(rulehelp.markdown(c)),
        },
        "defaultConfiguration": {"level": LEVEL.get(c["severity"], "error")},
        "properties": {
            "security-severity": SECURITY_SEVERITY.get(c["severity"], "8.0"),
            "tags": [xml_text(t, 200) for t in tags[:20]],  # GitHub reads 20 tags a rule
            "precision": "very-high",
            "severity": c["severity"],
            "strategy": c["strategy"],
            "agent": xml_text(c["agent"], 200),
        },
    }


def _primary(c: dict[str, Any], v: dict[str, Any], formats: dict[int, str]) -> dict[str, Any]:
    file, line = c.get("file"), c.get("line")
    physical = origin.location(file, line) if file else _trace_location(v, formats)
    return {"physicalLocation": physical, "logicalLocations": logical(v)}


def _message(v: dict[str, Any]) -> str:
    where = f" ({v['path']} record {v['record']})" if v["path"] else ""
    return plain(
        f"{v['contract_id']} violated in trace {v['trace_id']} at step {v['seq']}, "
        f"tool {v['tool'] or '-'}, span {v['span_id'] or '-'}{where}: {v['evidence']}",
        1200,
    )


def results(data: ReportData, formats: dict[int, str], index: dict[str, int]) -> list[dict]:
    """One SARIF result per violation (report order)."""
    others: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for v in data.violations:
        if not v["blamed"]:
            others.setdefault((v["trace_id"], v["contract_id"], v["guarantee"]), []).append(v)
    out = []
    seen: dict[str, int] = {}
    for v in data.blamed:
        c = data.contract(v["contract_id"])
        events = [(v, "blamed event"), *((o, "also offending") for o in others.get(
            (v["trace_id"], v["contract_id"], v["guarantee"]), []))]  # fmt: skip
        related = [
            {
                "id": k + 1,
                "physicalLocation": _trace_location(o, formats),
                "logicalLocations": logical(o),
                "message": {"text": _event_text(o, role)},
            }
            for k, (o, role) in enumerate(events[:MAX_RELATED])
        ]
        more = len(events) - len(related)
        fingerprint = baseline.fingerprint(v, c)
        seen[fingerprint] = seen.get(fingerprint, 0) + 1
        message = _message(v)
        if more:
            message += plain(f" ({more} further offending events not listed; -f json lists all)")
        out.append(
            {
                "ruleId": xml_text(v["contract_id"], 300),
                "ruleIndex": index.get(v["contract_id"], -1),
                "level": LEVEL.get(v["severity"], "error"),
                "message": {"text": message},
                "locations": [_primary(c, v, formats)],
                "relatedLocations": related,
                "partialFingerprints": {
                    "sponsioAudit/v1": fingerprint,
                    "primaryLocationLineHash": f"{fingerprint}:{seen[fingerprint]}",
                },
                "properties": {
                    "trace_id": xml_text(v["trace_id"], 300),
                    "span_id": xml_text(v["span_id"] or "", 100),
                    "step": v["seq"],
                    "kind": v["kind"],
                    "guarantee": v["guarantee"],
                    "tool": xml_text(v["tool"] or "", 200),
                    "file": xml_text(v["path"] or "", 1000),
                    "record": v["record"],
                    "severity": v["severity"],
                    "offending_events": len(events),
                    "offending_events_listed": len(related),
                },
            }
        )
    return out


def undecided_notifications(data: ReportData, index: dict[str, int]) -> list[dict[str, Any]]:
    """One ``note`` notification per (contract, verdict, reason) of the undecided verdicts.

    Decision: not results. An unverifiable verdict is not a finding in the
    code (nothing to fix at a line), and one alert per trace would bury the
    violations on a dashboard; SARIF's notifications are "conditions met
    while the tool ran", which is what "could not decide" is. Each names the
    rule (``associatedRule``), sits on the contract's line, and lists the
    traces (``properties.trace_ids``, first ``MAX_TRACE_IDS``) and their count.
    """
    groups: dict[tuple[str, str, str], list[str]] = {}
    for u in data.undecided:
        key = (u["contract_id"], u["verdict"], u.get("reason") or NO_REASON)
        groups.setdefault(key, []).append(u["trace_id"])
    out = []
    for (cid, verdict, reason), traces in groups.items():
        c = data.contract(cid)
        note: dict[str, Any] = {
            "level": "note",
            "message": {
                "text": plain(f"{cid}: {verdict} on {len(traces)} trace(s): {reason}", 1200)
            },
            "associatedRule": {"id": xml_text(cid, 300), "index": index.get(cid, -1)},
            "properties": {
                "verdict": verdict,
                "traces": len(traces),
                "trace_ids": [xml_text(tid, 300) for tid in sorted(traces)[:MAX_TRACE_IDS]],
            },
        }
        if c.get("file"):
            note["locations"] = [{"physicalLocation": origin.location(c["file"], c.get("line"))}]
        out.append(note)
    return out


def _artifacts(data: ReportData, prov: dict[str, Any]) -> list[dict[str, Any]]:
    """The input files and the contract files, each with its sha-256."""
    out = []
    for f in data.files:
        a: dict[str, Any] = {"location": origin.artifact(f["path"]), "roles": ["analysisTarget"]}
        if f.get("sha256"):
            a["hashes"] = {"sha-256": f["sha256"]}
        out.append(a)
    for c in prov.get("contract_files", []):
        role = "toolSpecifiedConfiguration" if c.get("pack") else "userSpecifiedConfiguration"
        a = {"location": origin.artifact(c["path"]), "roles": [role]}
        if c.get("sha256"):
            a["hashes"] = {"sha-256": c["sha256"]}
        out.append(a)
    return out


def document(data: ReportData, options: RenderOptions | None = None) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict."""
    prov: dict[str, Any] = data.provenance
    formats = {f["file_id"]: f["format"] for f in data.files}
    index = {c["id"]: i for i, c in enumerate(data.contracts)}
    driver = {
        "name": "sponsio-audit",
        "version": prov.get("tool_version") or "unknown",
        "informationUri": INFORMATION_URI,
        "rules": [rule(c) for c in data.contracts],
    }
    if prov.get("semantics_version"):
        driver["properties"] = {"semantics_version": prov["semantics_version"]}
    notifications = [
        {
            "level": "warning",
            "message": {"text": plain(f"input skipped: {s['reason']}", 600)},
            "locations": [{"physicalLocation": _skipped_location(s, formats)}],
        }
        for s in data.skipped
    ]
    notifications += undecided_notifications(data, index)
    notifications += [
        {"level": "warning", "message": {"text": plain(w, 600)}} for w in prov.get("warnings", [])
    ]
    invocation: dict[str, Any] = {
        "executionSuccessful": True,
        "toolExecutionNotifications": notifications,
    }
    if prov.get("run_at"):
        invocation["startTimeUtc"] = prov["run_at"]
    if prov.get("command"):
        invocation["commandLine"] = xml_text(shlex.join(prov["command"]), 4000)
        invocation["arguments"] = [xml_text(a, 1000) for a in prov["command"][1:]]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {origin.SRCROOT: {"uri": origin.source_root().as_uri() + "/"}},
        "invocations": [invocation],
        "artifacts": _artifacts(data, prov),
        "results": results(data, formats, index),
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render(data: ReportData, options: RenderOptions | None = None) -> str:
    """The SARIF JSON text."""
    return legal(json.dumps(document(data, options), indent=2, ensure_ascii=False)) + "\n"
