"""The ``html`` format: one self-contained page (no network; inline CSS, optional inline JS).

Everything is rendered in the page itself, so a viewer that blocks
scripts still sees every violation: the summary cards, a per-contract
table (CSS bars: share of the traces the contract applies to, i.e. pass +
violated + unverifiable, that violate it), the violations table (every
violation up to ``MAX_ROWS``, by severity and spread across contracts,
``ranking``), the timelines of violated traces (``htmltimeline``), the
unverifiable and skipped verdicts with their reasons, the guard's
recorded decisions and the skipped inputs. Every capped list says "N of
M" and how to see all. The inline script only adds filtering and
sorting to the violations table (its controls stay hidden without it)
and opens a timeline when its ``#trace-…`` link is followed (Chromium
opens it by itself: the anchor sits inside the ``<details>``).

Safety: every piece of trace or configuration content is HTML-escaped
(``html.escape`` of ``evidence.clean`` output). A Content-Security-Policy
allows no network and no script but the page's own (pinned by its
sha256), so even markup that slipped through could not run a script.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from importlib.resources import files

from sponsio_audit.redact import clean
from sponsio_audit.report import htmltimeline, ranking
from sponsio_audit.report.data import DECISION_COLUMNS, ReportData, decision_cells
from sponsio_audit.report.options import RenderOptions
from sponsio_audit.report.text import NO_REASON
from sponsio_audit.report.xmlchars import legal

MAX_ROWS = 2000
SEE_ALL = "every violation is in <code>-f json</code> (or <code>-f sarif</code>)"
SCRIPT = """
const table = document.getElementById('violations');
const body = table.tBodies[0];
const q = document.getElementById('filter'), sev = document.getElementById('severity');
document.getElementById('controls').hidden = false;
function apply() {
  const needle = q.value.toLowerCase();
  let shown = 0;
  for (const tr of body.rows) {
    const ok = tr.textContent.toLowerCase().includes(needle)
      && (!sev.value || tr.dataset.severity === sev.value);
    tr.hidden = !ok;
    if (ok) shown++;
  }
  document.getElementById('shown').textContent = '; ' + shown + ' shown by the filter';
}
q.addEventListener('input', apply);
sev.addEventListener('change', apply);
table.tHead.addEventListener('click', (ev) => {
  const th = ev.target.closest('th');
  if (!th) return;
  const i = th.cellIndex, num = th.classList.contains('num');
  const dir = th.dataset.dir === 'asc' ? -1 : 1;
  th.dataset.dir = dir === 1 ? 'asc' : 'desc';
  const key = (tr) => tr.cells[i].dataset.key ?? tr.cells[i].textContent;
  const rows = Array.from(body.rows);
  rows.sort((a, b) => dir * (num ? Number(key(a)) - Number(key(b))
    : key(a).localeCompare(key(b))));
  for (const tr of rows) body.appendChild(tr);
});
function openTarget() {
  const t = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  const d = t && t.closest('details');
  if (d) d.open = true;
}
window.addEventListener('hashchange', openTarget);
openTarget();
"""
_SLOT = re.compile(r"\{\{(\w+)\}\}")
_SEV_KEY = {"high": "0", "medium": "1", "low": "2"}


def e(value: object, limit: int = 200) -> str:
    """Untrusted ``value`` as HTML text."""
    return html.escape("" if value is None else clean(value, limit))


def table(head: list[str], rows: list[str], attrs: str = "") -> str:
    """A table in a horizontally scrolling box (a wide table never widens the page)."""
    return (
        f'<div class="scroll"><table{attrs}><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


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
            f'<td class="num">{vc["unverifiable"]}</td>'
            f'<td><div class="bar" title="{pct}% of the traces it applies to">'
            f'<span style="width:{pct}%"></span></div>{pct}%</td></tr>'
        )
    head = [
        f"<th>{h}</th>"
        for h in (
            "contract",
            "description",
            "severity",
            "violations",
            "traces",
            "unverifiable",
            "violated share",
        )
    ]
    return table(head, rows)


def _violations(data: ReportData, anchors: dict[str, str]) -> tuple[str, str]:
    """The violations table and its heading's "N of M" text."""
    blamed = data.blamed
    shown = ranking.top(blamed, MAX_ROWS)
    rows = []
    for v in shown:
        tid = e(v["trace_id"], 300)
        anchor = anchors.get(v["trace_id"])
        trace = f'<a href="#{anchor}">{tid}</a>' if anchor else tid
        where = f"{e(v['path'], 300)}:{e(v['record'])}" if v["path"] else ""
        sev = e(v["severity"], 10)
        rows.append(
            f'<tr data-severity="{sev}">'
            f'<td class="sev-{sev}" data-label="severity" '
            f'data-key="{_SEV_KEY.get(v["severity"], "9")}">{e(v["severity"])}</td>'
            f'<td class="mono" data-label="contract">{e(v["contract_id"])}</td>'
            f'<td class="mono" data-label="trace">{trace}</td>'
            f'<td class="num" data-label="step">{e(v["seq"])}</td>'
            f'<td class="mono" data-label="span">{e(v["span_id"])}</td>'
            f'<td data-label="tool">{e(v["tool"])}</td>'
            f'<td data-label="evidence">{e(v["evidence"], 300)}</td>'
            f'<td class="mono" data-label="file">{where}</td></tr>'
        )
    head = [
        '<th title="sort">severity</th>',
        "<th>contract</th>",
        "<th>trace</th>",
        '<th class="num">step</th>',
        "<th>span</th>",
        "<th>tool</th>",
        "<th>evidence</th>",
        "<th>file:record</th>",
    ]
    if len(shown) < len(blamed):
        count = (
            f"{len(shown)} of {len(blamed)} listed, by severity and spread across "
            f"contracts; {SEE_ALL}"
        )
    else:
        count = f"all {len(blamed)} listed"
    return table(head, rows, ' id="violations"'), count


def _undecided(data: ReportData) -> str:
    """Unverifiable and skipped verdicts per contract and trace, with their reasons."""
    rows_in = data.undecided
    if not rows_in:
        return ""
    shown = rows_in[:MAX_ROWS]
    rows = [
        f'<tr><td class="mono">{e(u["contract_id"])}</td><td class="mono">{e(u["trace_id"], 300)}'
        f'</td><td class="num">{e(u["guarantee"])}</td><td>{e(u["verdict"])}</td>'
        f"<td>{e(u.get('reason') or NO_REASON, 600)}</td></tr>"
        for u in shown
    ]
    head = [f"<th>{h}</th>" for h in ("contract", "trace", "guarantee", "verdict", "reason")]
    count = (
        f"all {len(rows_in)} listed"
        if len(shown) == len(rows_in)
        else f"{len(shown)} of {len(rows_in)} listed; all are in <code>-f json</code>"
    )
    return (
        f'<h2 id="undecided">Unverifiable and skipped ({count})</h2>'
        "<p>The recorded facts could not decide these contracts on these traces (never a "
        "pass): the reason says what was missing and how to record it.</p>" + table(head, rows)
    )


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
    head = ["<th>contract</th>", *(f"<th>{e(c)}</th>" for c in DECISION_COLUMNS)]
    return '<h2 id="guard-decisions">Guard decisions (recorded)</h2>' + table(head, rows)


def _skipped(data: ReportData) -> str:
    if not data.skipped:
        return ""
    rows = [
        f'<tr><td class="mono">{e(s["path"], 300)}</td><td class="num">{e(s["record"])}</td>'
        f"<td>{e(s['reason'], 400)}</td></tr>"
        for s in data.skipped
    ]
    head = ["<th>file</th>", "<th>record</th>", "<th>reason</th>"]
    return f"<h2>Skipped inputs (all {len(rows)})</h2>" + table(head, rows)


def _provenance(data: ReportData) -> str:
    prov = data.provenance
    return htmltimeline.provenance(prov) if prov else ""


def render(data: ReportData, options: RenderOptions | None = None) -> str:
    """The HTML page."""
    anchors = htmltimeline.anchors(list(data.events))
    violations, count = _violations(data, anchors)
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode()
    slots = {
        "script_hash": f"sha256-{digest}",
        "provenance": _provenance(data),
        "summary": _summary(data),
        "contracts": _contracts(data),
        "violation_count": count,
        "violations": violations,
        "timelines": htmltimeline.timelines(data, anchors),
        "undecided": _undecided(data),
        "decisions": _decisions(data),
        "skipped": _skipped(data),
        "script": SCRIPT,
    }
    template = files("sponsio_audit.report").joinpath("template.html").read_text("utf-8")
    return legal(_SLOT.sub(lambda m: slots[m.group(1)], template))
