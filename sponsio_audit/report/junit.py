"""The ``junit`` format: JUnit XML for CI test dashboards.

One ``<testsuite>`` per contract (name = contract id), one ``<testcase>``
per trace the contract applies to (name = trace id, classname = contract
id; traces where it is ``not_applicable``, e.g. another agent's traces,
are left out so as not to drown the dashboard). A violated trace carries
one ``<failure>`` per violation (message = evidence of the blamed event,
type = kind, text = every offending event); unverifiable and skipped
traces are ``<skipped>`` with the reason; passing traces (and violations
suppressed by a baseline) are plain testcases.
Built with ``xml.etree`` so every value is escaped; control characters,
which XML 1.0 cannot carry, are removed first.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from sponsio_audit.redact import clean
from sponsio_audit.report.data import ReportData

_SKIP_REASON = {
    "unverifiable": "unverifiable: the trace did not record what the contract needs",
    "skipped": "skipped: not evaluated offline",
}


def x(value: object, limit: int = 500) -> str:
    """Untrusted ``value`` as XML-safe text."""
    return "" if value is None else clean(value, limit)


def _worst(verdicts: list[str]) -> str:
    for v in ("violated", "unverifiable", "skipped"):
        if v in verdicts:
            return v
    return "pass"


def render(data: ReportData) -> str:
    """The JUnit XML text (``data`` loaded with ``verdict_rows=True``)."""
    by_contract: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in data.verdict_rows:
        if row["verdict"] != "not_applicable":
            cases = by_contract.setdefault(row["contract_id"], {})
            cases.setdefault(row["trace_id"], []).append(row)
    viol: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for v in data.violations:
        viol.setdefault((v["contract_id"], v["trace_id"]), []).append(v)
    root = ET.Element("testsuites", name="sponsio-audit")
    total = failures = skipped = 0
    for c in data.contracts:
        traces = by_contract.get(c["id"], {})
        suite = ET.SubElement(root, "testsuite", name=x(c["id"]))
        n_fail = n_skip = 0
        for tid in sorted(traces):
            case = ET.SubElement(suite, "testcase", name=x(tid), classname=x(c["id"]))
            rows = viol.get((c["id"], tid), [])
            blamed = [v for v in rows if v["blamed"]]
            verdict = _worst([r["verdict"] for r in traces[tid]])
            if blamed:
                n_fail += 1
                for b in blamed:
                    f = ET.SubElement(case, "failure", message=x(b["evidence"]), type=x(b["kind"]))
                    f.text = "\n".join(
                        f"step {x(o['seq'])} {x(o['tool'])}: {x(o['evidence'])}"
                        for o in rows
                        if o["guarantee"] == b["guarantee"]
                    )
            elif verdict in _SKIP_REASON:
                n_skip += 1
                ET.SubElement(case, "skipped", message=_SKIP_REASON[verdict])
        suite.set("tests", str(len(traces)))
        suite.set("failures", str(n_fail))
        suite.set("errors", "0")
        suite.set("skipped", str(n_skip))
        total, failures, skipped = total + len(traces), failures + n_fail, skipped + n_skip
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("skipped", str(skipped))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
