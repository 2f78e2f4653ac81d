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
Control characters and newlines are dropped from both. A ``<summary>``
line is HTML, escaped as such.
"""

from __future__ import annotations

import html
from typing import Any

from sponsio_audit.redact import clean
from sponsio_audit.report import ranking
from sponsio_audit.report.data import DECISION_COLUMNS, ReportData, decision_cells
from sponsio_audit.report.options import RenderOptions
from sponsio_audit.report.text import NO_REASON, code_span, md_text

MAX_PER_CONTRACT = 100
SEE_ALL = "`--limit 0` lists all; `-f json` has every violation"


def md(value: object, limit: int = 120) -> str:
    """Untrusted ``value`` as inert Markdown table-cell text."""
    return md_text(value, limit)


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _violation_row(x: dict[str, Any]) -> list[str]:
    where = f"{x['path']}:{x['record']}" if x["path"] else ""
    return [
        md(x["severity"]),
        code_span(x["contract_id"]),
        code_span(x["trace_id"], 200),
        md(x["seq"]),
        code_span(x["span_id"]),
        code_span(x["tool"]),
        md(x["evidence"], 300),
        code_span(where, 300),
    ]


_VIOLATION_HEAD = ["severity", "contract", "trace", "step", "span", "tool", "evidence", "file"]


def _provenance(data: ReportData) -> list[str]:
    prov = data.provenance
    if not prov:
        return []
    lines = [
        "",
        f"sponsio-audit {code_span(prov.get('tool_version'), 40, cell=False)}, semantics "
        f"{code_span(prov.get('semantics_version'), 40, cell=False)}, run at "
        f"{code_span(prov.get('run_at'), 40, cell=False)}: "
        f"{code_span(' '.join(prov.get('command') or []), 500, cell=False)}",
        "",
    ]
    lines += [f"**Warning:** {md_text(w, 600)}" for w in prov.get("warnings", [])]
    lines += [""] if prov.get("warnings") else []
    rows = [
        [
            code_span(c.get("path"), 300),
            f"pack {code_span(c['pack'], 100)}" if c.get("pack") else "contracts",
            f"{c.get('contracts')} contract(s)",
            code_span(c.get("sha256")),
        ]
        for c in prov.get("contract_files", [])
    ]
    inputs = prov.get("inputs", [])
    rows += [
        [
            code_span(f.get("path"), 300),
            md(f.get("format")),
            f"{f.get('records')} records, {f.get('skipped')} skipped",
            code_span(f.get("sha256")),
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
    summary = html.escape(
        f"{clean(c['id'], 200)} ({c['severity']}): {len(mine)} violation(s), "
        f"{vc['unverifiable']} unverifiable, {vc['skipped']} skipped",
        quote=False,
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
                    code_span(u["trace_id"], 200),
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
                code_span(c["id"]),
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
                    code_span(d["contract_id"])
                    if d["contract_id"] is not None
                    else "*(no contract)*",
                    *(str(n) for n in decision_cells(d)),
                ]
                for d in data.guard_decisions
            ],
        )
    if data.skipped:
        lines += ["", f"### Skipped inputs (all {len(data.skipped)})", ""]
        lines += _table(
            ["file", "record", "reason"],
            [
                [code_span(s["path"], 200), md(s["record"]), md(s["reason"], 200)]
                for s in data.skipped
            ],
        )
    return "\n".join(lines) + "\n"
