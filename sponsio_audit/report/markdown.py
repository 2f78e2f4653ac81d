"""The ``markdown`` format: for ``$GITHUB_STEP_SUMMARY``, pull-request comments and CI summaries.

GitHub-flavoured Markdown: a summary line and table, the provenance, a
per-contract table, the top violations (``--limit``: by severity, spread
across contracts, ``ranking``), then one collapsed ``<details>`` block per
contract with every violation of it and its unverifiable and skipped
traces with their reasons, the guard's recorded decisions (when the
inputs hold any) and the skipped inputs.

Trace content is inert: ids (contract, trace, span, tool, file) are code
spans (``text.code_span``: nothing is interpreted inside one, so no
escaped underscores); free text (evidence, reasons, descriptions) is
``text.md_text`` (``&``, ``<``, ``>`` as HTML entities, Markdown's active
characters backslash-escaped, so no link, image or HTML can be planted).
On top of both, ``unlinked`` breaks what GitHub links in plain text: an
``@`` (a mention notifies that user when the report is a PR comment; also
an e-mail autolink) is ``&#64;``, the ``:`` of ``://`` is ``&#58;`` and the
dot of ``www.`` is ``&#46;`` (bare-URL autolinks); GitHub shows the literal
characters. An entity means nothing inside a code span, so an id holding
any of them is given as ``md`` text instead. ``md`` and ``code`` are the
only ways untrusted text enters the report. Control characters and
newlines are dropped from all of it. A ``<summary>`` line is HTML, escaped
as such, then ``unlinked``.
"""

from __future__ import annotations

import html
import re
from typing import Any

from sponsio_audit.redact import clean
from sponsio_audit.report import ranking
from sponsio_audit.report.data import DECISION_COLUMNS, ReportData, decision_cells
from sponsio_audit.report.options import RenderOptions
from sponsio_audit.report.text import NO_REASON, code_span, md_text, xml_text

MAX_PER_CONTRACT = 100
SEE_ALL = "`--limit 0` lists all; `-f json` has every violation"


_LINKING = re.compile(r"@|:(?=//)|(?<=www)\.", re.IGNORECASE)
_ENTITY = {"@": "&#64;", ":": "&#58;", ".": "&#46;"}


def unlinked(text: str) -> str:
    """Escaped Markdown (or HTML) ``text`` with no @mention and no bare-URL autolink left:
    ``@``, the ``:`` of ``://`` and the dot of ``www.`` as character references."""
    return _LINKING.sub(lambda m: _ENTITY[m.group(0)], text)


def md(value: object, limit: int = 120) -> str:
    """Untrusted ``value`` as inert Markdown table-cell text."""
    return unlinked(md_text(value, limit))


def code(value: object, limit: int = 120, *, cell: bool = True) -> str:
    """Untrusted ``value`` as an inert code span (``text.code_span``), or as ``md`` text when
    it holds what GitHub would link (a reference is not decoded in a code span)."""
    if _LINKING.search(xml_text(value, limit)):
        return md(value, limit)
    return unlinked(code_span(value, limit, cell=cell))


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _violation_row(x: dict[str, Any]) -> list[str]:
    where = f"{x['path']}:{x['record']}" if x["path"] else ""
    return [
        md(x["severity"]),
        code(x["contract_id"]),
        code(x["trace_id"], 200),
        md(x["seq"]),
        code(x["span_id"]),
        code(x["tool"]),
        md(x["evidence"], 300),
        code(where, 300),
    ]


_VIOLATION_HEAD = ["severity", "contract", "trace", "step", "span", "tool", "evidence", "file"]


def _provenance(data: ReportData) -> list[str]:
    prov = data.provenance
    if not prov:
        return []
    lines = [
        "",
        f"sponsio-audit {code(prov.get('tool_version'), 40, cell=False)}, semantics "
        f"{code(prov.get('semantics_version'), 40, cell=False)}, run at "
        f"{code(prov.get('run_at'), 40, cell=False)}: "
        f"{code(' '.join(prov.get('command') or []), 500, cell=False)}",
        "",
    ]
    lines += [f"**Warning:** {md(w, 600)}" for w in prov.get("warnings", [])]
    lines += [""] if prov.get("warnings") else []
    rows = [
        [
            code(c.get("path"), 300),
            f"pack {code(c['pack'], 100)}" if c.get("pack") else "contracts",
            f"{c.get('contracts')} contract(s)",
            code(c.get("sha256")),
        ]
        for c in prov.get("contract_files", [])
    ]
    inputs = prov.get("inputs", [])
    rows += [
        [
            code(f.get("path"), 300),
            md(f.get("format")),
            f"{f.get('records')} records, {f.get('skipped')} skipped",
            code(f.get("sha256")),
        ]
        for f in inputs[:MAX_PER_CONTRACT]
    ]
    if len(inputs) > MAX_PER_CONTRACT:
        shown = f"first {MAX_PER_CONTRACT} of {len(inputs)}"
        lines += [f"Input files: {shown}; `-f json` lists all.", ""]
    return lines + _table(["file", "kind", "counts", "sha256"], rows) if rows else lines


def _details(data: ReportData, c: dict[str, Any], r: dict[str, Any]) -> list[str]:
    """The collapsed block of one contract: its violations, then its undecided traces."""
    mine = [v for v in data.blamed if v["contract_id"] == c["id"]]
    undecided = [u for u in (data.undecided) if u["contract_id"] == c["id"]]
    if not mine and not undecided:
        return []
    vc = r["verdicts"]
    summary = unlinked(
        html.escape(
            f"{clean(c['id'], 200)} ({c['severity']}): {len(mine)} violation(s), "
            f"{vc['unverifiable']} unverifiable, {vc['skipped']} skipped",
            quote=False,
        )
    )
    lines = ["", "<details>", f"<summary>{summary}</summary>", ""]
    if c["description"]:
        lines += [md(c["description"], 300), ""]
    if mine:
        shown = mine[:MAX_PER_CONTRACT]
        lines += [f"Violations ({ranking.shown_of(len(shown), len(mine), SEE_ALL)}):", ""]
        head = [h for h in _VIOLATION_HEAD if h != "contract"]
        lines += _table(head, [_violation_row(x)[:1] + _violation_row(x)[2:] for x in shown])
        lines.append("")
    if undecided:
        shown_u = undecided[:MAX_PER_CONTRACT]
        lines += [
            f"Unverifiable and skipped "
            f"({ranking.shown_of(len(shown_u), len(undecided), '`-f json` lists all')}):",
            "",
        ]
        lines += _table(
            ["trace", "guarantee", "verdict", "reason"],
            [
                [
                    code(u["trace_id"], 200),
                    md(u["guarantee"]),
                    md(u["verdict"]),
                    md(u.get("reason") or NO_REASON, 400),
                ]
                for u in shown_u
            ],
        )
        lines.append("")
    return [*lines, "</details>"]


def render(data: ReportData, options: RenderOptions | None = None) -> str:
    """The Markdown text."""
    options = options or RenderOptions()
    n, v = data.totals, data.verdict_counts
    status = "❌" if n["violations"] else "✅"
    lines = [
        f"## {status} sponsio-audit: {n['violations']} violation(s)",
        *_provenance(data),
        "",
        f"{n['files']} files, {n['spans']} spans, {n['events']} events, "
        f"{n['traces']} traces, {n['contracts']} contracts, {n['skipped']} skipped records.",
        "",
    ]
    if data.suppressed:
        lines += [f"{data.suppressed} known violation(s) suppressed by the baseline.", ""]
    lines += _table(
        ["pass", "violated", "unverifiable", "not applicable", "skipped"],
        [[str(v[k]) for k in ("pass", "violated", "unverifiable", "not_applicable", "skipped")]],
    )
    lines += ["", "### Contracts", ""]
    lines += _table(
        ["contract", "severity", "violations", "traces violated", "events blamed", "unverifiable"],
        [
            [
                code(c["id"]),
                md(c["severity"]),
                str(r["violations"]),
                str(r["traces_violated"]),
                str(r["events_blamed"]),
                str(r["verdicts"]["unverifiable"]),
            ]
            for c, r in zip(data.contracts, data.per_contract, strict=True)
        ],
    )
    blamed = data.blamed
    if blamed:
        top = ranking.top(blamed, options.limit)
        lines += [
            "",
            f"### Top violations ({ranking.shown_of(len(top), len(blamed), SEE_ALL)})",
            "",
        ]
        lines += _table(_VIOLATION_HEAD, [_violation_row(x) for x in top])
    blocks = [
        line
        for c, r in zip(data.contracts, data.per_contract, strict=True)
        for line in _details(data, c, r)
    ]
    if blocks:
        lines += ["", "### Per contract", *blocks]
    if data.guard_decisions:
        lines += ["", "### Guard decisions (recorded)", ""]
        lines += _table(
            ["contract", *(c.replace("_", " ") for c in DECISION_COLUMNS)],
            [
                [
                    code(d["contract_id"]) if d["contract_id"] is not None else "*(no contract)*",
                    *(str(n) for n in decision_cells(d)),
                ]
                for d in data.guard_decisions
            ],
        )
    if data.skipped:
        lines += ["", f"### Skipped inputs (all {len(data.skipped)})", ""]
        lines += _table(
            ["file", "record", "reason"],
            [[code(s["path"], 200), md(s["record"]), md(s["reason"], 200)] for s in data.skipped],
        )
    return "\n".join(lines) + "\n"
