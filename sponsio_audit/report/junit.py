"""The ``junit`` format: JUnit XML for CI test dashboards, agreeing with the exit code.

One ``<testsuite>`` per contract (name = contract id), one ``<testcase>``
per trace the contract applies to, named ``<trace id> (<input file>)``
(``classname`` = contract id, ``file`` = the input file; traces where the
contract is ``not_applicable``, e.g. another agent's traces, are left
out so as not to drown the dashboard). Each testcase carries
``<properties>``: ``trace_id``, ``severity`` of the contract and, per
violation, ``violation`` (step, tool, evidence).

- A violation at or above ``--fail-on`` is a ``<failure>`` (message = the
  evidence of the blamed event, type = its kind, text = every offending
  event); a violation below it is recorded (``<system-out>`` and the
  ``violation`` property) but is not a failure, so the dashboard is red
  exactly when the exit code is 1.
- Unverifiable and skipped traces are ``<skipped>`` with the verdict's
  reason (``reason`` of the verdicts table when recorded).
- Passing traces (and violations suppressed by a baseline) are plain
  testcases.

Built with ``xml.etree`` so every value is escaped; ``text.xml_text``
removes first what XML 1.0 cannot carry at all.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from typing import Any

from sponsio_audit.report.data import ReportData
from sponsio_audit.report.options import RenderOptions
from sponsio_audit.report.text import xml_text
from sponsio_audit.report.xmlchars import legal

_SKIP_REASON = {
    "unverifiable": "unverifiable: the trace did not record what the contract needs",
    "skipped": "skipped: not evaluated offline",
}


def x(value: object, limit: int = 500) -> str:
    """Untrusted ``value`` as XML-safe text."""
    return xml_text(value, limit)


def _worst(verdicts: list[str]) -> str:
    for v in ("violated", "unverifiable", "skipped"):
        if v in verdicts:
            return v
    return "pass"


def skip_message(rows: list[dict[str, Any]], verdict: str) -> str:
    """Why a trace was not decided: the recorded reasons of its undecided guarantees."""
    reasons = sorted(
        {str(r["reason"]) for r in rows if r["verdict"] == verdict and r.get("reason")}
    )
    if not reasons:
        return _SKIP_REASON[verdict]
    return f"{verdict}: " + "; ".join(reasons)


def _offending(rows: list[dict[str, Any]], guarantee: int) -> str:
    return "\n".join(
        f"step {x(o['seq'])} {x(o['tool'])} (span {x(o['span_id'])}, "
        f"{x(o['path'])} record {x(o['record'])}): {x(o['evidence'])}"
        for o in rows
        if o["guarantee"] == guarantee
    )


def _case_name(tid: str, files: list[str]) -> str:
    return f"{x(tid, 300)} ({x(', '.join(files), 300)})" if files else x(tid, 300)


def _case(
    suite: ET.Element,
    c: dict[str, Any],
    tid: str,
    verdict_rows: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    files: list[str],
    options: RenderOptions,
) -> str:
    """Add one testcase; its outcome: ``failure``, ``recorded``, ``skipped`` or ``pass``."""
    case = ET.SubElement(suite, "testcase", name=_case_name(tid, files), classname=x(c["id"], 300))
    if files:
        case.set("file", x(files[0], 1000))
    props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", name="trace_id", value=x(tid, 300))
    ET.SubElement(props, "property", name="severity", value=x(c["severity"], 20))
    blamed = [v for v in rows if v["blamed"]]
    for b in blamed:
        ET.SubElement(
            props,
            "property",
            name="violation",
            value=x(f"step {b['seq']} {b['tool'] or '-'}: {b['evidence']}", 600),
        )
    if blamed and options.fails(c["severity"]):
        for b in blamed:
            f = ET.SubElement(case, "failure", message=x(b["evidence"]), type=x(b["kind"]))
            f.text = _offending(rows, b["guarantee"])
        return "failure"
    if blamed:
        out = ET.SubElement(case, "system-out")
        out.text = (
            f"{len(blamed)} violation(s) of severity {x(c['severity'], 20)}, below "
            f"--fail-on {options.fail_on}: recorded, not failing.\n"
            + "\n".join(_offending(rows, b["guarantee"]) for b in blamed)
        )
        return "recorded"
    verdict = _worst([r["verdict"] for r in verdict_rows])
    if verdict in _SKIP_REASON:
        ET.SubElement(case, "skipped", message=x(skip_message(verdict_rows, verdict), 1000))
        return "skipped"
    return "pass"


def _provenance(suite: ET.Element, prov: dict[str, Any]) -> None:
    """The run's provenance as the suite's properties (JUnit's place for run facts)."""
    if prov.get("run_at"):
        suite.set("timestamp", x(prov["run_at"], 40))
    props = ET.SubElement(suite, "properties")
    facts = [
        ("tool_version", prov.get("tool_version")),
        ("semantics_version", prov.get("semantics_version")),
        ("run_at", prov.get("run_at")),
        ("command", shlex.join(prov.get("command") or [])),
    ]
    facts += [
        ("contract_file", f"{c.get('pack') or c['path']} sha256 {c.get('sha256')}")
        for c in prov.get("contract_files", [])
    ]
    facts += [
        ("input_file", f"{f['path']} sha256 {f.get('sha256')} records {f.get('records')}")
        for f in prov.get("inputs", [])
    ]
    facts += [("warning", w) for w in prov.get("warnings", [])]
    for name, value in facts:
        ET.SubElement(props, "property", name=name, value=x(value, 2000))


def render(data: ReportData, options: RenderOptions | None = None) -> str:
    """The JUnit XML text (``data`` loaded with ``verdict_rows=True``)."""
    options = options or RenderOptions()
    by_contract: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in data.verdict_rows:
        if row["verdict"] != "not_applicable":
            cases = by_contract.setdefault(row["contract_id"], {})
            cases.setdefault(row["trace_id"], []).append(row)
    viol: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for v in data.violations:
        viol.setdefault((v["contract_id"], v["trace_id"]), []).append(v)
    trace_files = dict(data.trace_files)
    for v in data.violations:  # violated traces name their file even without trace_files
        if v["path"] and v["trace_id"] not in trace_files:
            trace_files[v["trace_id"]] = [v["path"]]
    root = ET.Element("testsuites", name="sponsio-audit")
    prov: dict[str, Any] = data.provenance
    if prov.get("run_at"):
        root.set("timestamp", x(prov["run_at"], 40))
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for c in data.contracts:
        traces = by_contract.get(c["id"], {})
        suite = ET.SubElement(root, "testsuite", name=x(c["id"], 300))
        if prov:
            _provenance(suite, prov)
        counts = {"failure": 0, "recorded": 0, "skipped": 0, "pass": 0}
        for tid in sorted(traces):
            files = list(trace_files.get(tid, []))
            outcome = _case(
                suite, c, tid, traces[tid], viol.get((c["id"], tid), []), files, options
            )
            counts[outcome] += 1
        suite.set("tests", str(len(traces)))
        suite.set("failures", str(counts["failure"]))
        suite.set("errors", "0")
        suite.set("skipped", str(counts["skipped"]))
        totals["tests"] += len(traces)
        totals["failures"] += counts["failure"]
        totals["skipped"] += counts["skipped"]
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("skipped", str(totals["skipped"]))
    ET.indent(root)
    return legal(ET.tostring(root, encoding="unicode", xml_declaration=True)) + "\n"
