"""The ``html`` format: one self-contained page (no network; inline CSS and JS).

Sections: summary cards, a per-contract chart (CSS bars: share of the
traces the contract applies to, i.e. pass + violated + unverifiable, that
violate it), a filterable violations table, the
timelines of violated traces (``timeline.rows``: redacted excerpts, blamed
and offending events marked) and, when the inputs hold any, the guard's
recorded decisions per contract.

Safety: every piece of trace or configuration content is HTML-escaped
(``html.escape``). The violations table is built by the inline script from
data embedded as ``<script type="application/json">`` in which ``<``,
``>``, ``&``, U+2028 and U+2029 are ``\\u`` escapes, and it writes cells
with ``textContent`` only. A Content-Security-Policy allows no network and
no script but the page's own (pinned by its sha256), so even markup that
slipped through could not run a script.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from importlib.resources import files
from typing import Any

from sponsio_audit.redact import clean
from sponsio_audit.report import timeline
from sponsio_audit.report.data import DECISION_COLUMNS, ReportData, decision_cells

SCRIPT = """
const data = JSON.parse(document.getElementById('report-data').textContent);
const body = document.querySelector('#violations tbody');
const cols = ['severity', 'contract_id', 'trace_id', 'step', 'tool', 'evidence'];
for (const v of data.violations) {
  const tr = document.createElement('tr');
  tr.dataset.severity = v.severity;
  for (const k of cols) {
    const td = document.createElement('td');
    if (k === 'trace_id' && v.anchor) {
      const a = document.createElement('a');
      a.href = '#' + v.anchor;
      a.textContent = v[k];
      a.addEventListener('click', () => { document.getElementById(v.anchor).open = true; });
      td.appendChild(a);
    } else {
      td.textContent = v[k] === null ? '' : String(v[k]);
    }
    if (k === 'severity') td.className = 'sev-' + v.severity;
    tr.appendChild(td);
  }
  tr.dataset.text = cols.map(k => String(v[k] === null ? '' : v[k])).join(' ').toLowerCase();
  body.appendChild(tr);
}
const q = document.getElementById('filter'), sev = document.getElementById('severity');
function apply() {
  const needle = q.value.toLowerCase();
  let shown = 0;
  for (const tr of body.rows) {
    const ok = tr.dataset.text.includes(needle)
      && (!sev.value || tr.dataset.severity === sev.value);
    tr.hidden = !ok;
    if (ok) shown++;
  }
  document.getElementById('shown').textContent = String(shown);
}
q.addEventListener('input', apply);
sev.addEventListener('change', apply);
apply();
"""
_SLOT = re.compile(r"\{\{(\w+)\}\}")


def e(value: object, limit: int = 200) -> str:
    """Untrusted ``value`` as HTML text."""
    return html.escape("" if value is None else clean(value, limit))


def script_json(obj: Any) -> str:
    """JSON safe inside ``<script>``: ``< > &`` and U+2028/2029 as ``\\u`` escapes."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(ch, esc)
    return text


def _summary(data: ReportData) -> str:
    n, v = data.totals, data.verdict_counts
    cards = [(k, n[k]) for k in ("files", "spans", "events", "skipped", "traces", "contracts")]
    cards += [
        ("pass", v["pass"]),
        ("violated", v["violated"]),
        ("unverifiable", v["unverifiable"]),
        ("not applicable", v["not_applicable"]),
        ("skipped clauses", v["skipped"]),
        ("violations", n["violations"]),
    ]
    if data.suppressed:
        cards.append(("suppressed by baseline", data.suppressed))
    inner = "".join(f'<div class="card">{e(k)}<b>{int(x)}</b></div>' for k, x in cards)
    return f'<div class="cards">{inner}</div>'


def _contracts(data: ReportData) -> str:
    rows = []
    for c, r in zip(data.contracts, data.per_contract, strict=True):
        vc = r["verdicts"]
        applicable = vc["pass"] + vc["violated"] + vc["unverifiable"] or 1
        pct = round(100 * vc["violated"] / applicable)
        rows.append(
            f'<tr><td class="mono">{e(c["id"])}</td><td>{e(c["description"])}</td>'
            f'<td class="sev-{e(c["severity"], 10)}">{e(c["severity"])}</td>'
            f'<td class="num">{r["violations"]}</td><td class="num">{r["traces_violated"]}</td>'
            f'<td><div class="bar" title="{pct}% of the traces it applies to">'
            f'<span style="width:{pct}%"></span></div></td></tr>'
        )
    head = (
        "<tr><th>contract</th><th>description</th><th>severity</th><th>violations</th>"
        "<th>traces</th><th>violated share</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _timelines(data: ReportData, anchors: dict[str, str]) -> str:
    parts = []
    for tid, events in data.events.items():
        mine = [v for v in data.violations if v["trace_id"] == tid]
        rows = []
        for r in timeline.rows(events, mine):
            cls = (
                "blamed"
                if r["blamed"]
                else "offending"
                if r["offending"]
                else ("opened" if r["opened"] else "")
            )
            marks = "; ".join(
                f"{label}: {', '.join(r[key])}"
                for key, label in (
                    ("blamed", "blamed by"),
                    ("offending", "offending for"),
                    ("opened", "opened obligation of"),
                )
                if r[key]
            )
            rows.append(
                f'<tr class="{cls}"><td class="num">{r["step"]}</td><td>{e(r["time"])}</td>'
                f"<td>{e(r['agent'])}</td><td>{e(r['type'])}</td><td>{e(r['tool'])}</td>"
                f'<td class="mono">{e(r["excerpt"])}</td><td>{e(marks, 400)}</td></tr>'
            )
        contracts = ", ".join(sorted({v["contract_id"] for v in mine}))
        parts.append(
            f'<details id="{anchors[tid]}"><summary><span class="mono">{e(tid)}</span> '
            f"— {e(contracts, 400)}</summary><table><tr><th>step</th><th>time</th>"
            "<th>agent</th><th>type</th><th>tool</th><th>args / output</th><th>marks</th></tr>"
            f"{''.join(rows)}</table></details>"
        )
    return "".join(parts) or "<p>No violations.</p>"


def _decisions(data: ReportData) -> str:
    if not data.guard_decisions:
        return ""
    rows = []
    for d in data.guard_decisions:
        cid = d["contract_id"]
        name = (
            f'<td class="mono">{e(cid)}</td>'
            if cid is not None
            else "<td><i>(no contract)</i></td>"
        )
        nums = "".join(f'<td class="num">{int(n)}</td>' for n in decision_cells(d))
        rows.append(f"<tr>{name}{nums}</tr>")
    head = "<tr><th>contract</th>" + "".join(f"<th>{e(c)}</th>" for c in DECISION_COLUMNS) + "</tr>"
    return (
        '<h2 id="guard-decisions">Guard decisions (recorded)</h2>'
        f"<table>{head}{''.join(rows)}</table>"
    )


def _skipped(data: ReportData) -> str:
    if not data.skipped:
        return ""
    rows = "".join(
        f'<tr><td class="mono">{e(s["path"])}</td><td class="num">{e(s["record"])}</td>'
        f"<td>{e(s['reason'])}</td></tr>"
        for s in data.skipped
    )
    head = "<tr><th>file</th><th>record</th><th>reason</th></tr>"
    return f"<h2>Skipped inputs</h2><table>{head}{rows}</table>"


def render(data: ReportData) -> str:
    """The HTML page."""
    anchors = {tid: f"t{i}" for i, tid in enumerate(data.events)}
    payload = {
        "schema": "sponsio-audit/report/1",
        "violations": [
            {
                "severity": v["severity"],
                "contract_id": clean(v["contract_id"], 200),
                "trace_id": clean(v["trace_id"], 200),
                "step": v["seq"],
                "tool": clean(v["tool"] or "", 200),
                "evidence": clean(v["evidence"], 300),
                "kind": v["kind"],
                "anchor": anchors.get(v["trace_id"]),
            }
            for v in data.blamed
        ],
    }
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode()
    slots = {
        "script_hash": f"sha256-{digest}",
        "summary": _summary(data),
        "contracts": _contracts(data),
        "violation_count": str(len(payload["violations"])),
        "timelines": _timelines(data, anchors),
        "decisions": _decisions(data),
        "skipped": _skipped(data),
        "data": script_json(payload),
        "script": SCRIPT,
    }
    template = files("sponsio_audit.report").joinpath("template.html").read_text("utf-8")
    return _SLOT.sub(lambda m: slots[m.group(1)], template)
