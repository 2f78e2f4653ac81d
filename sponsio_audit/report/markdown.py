"""The ``markdown`` format: for pull-request comments and CI job summaries.

GitHub-flavoured Markdown: a summary line and table, a per-contract table,
the top violations, the guard's recorded decisions (when the inputs hold
any) and the skipped inputs. Trace content is inert: control
characters and newlines are dropped, ``&``, ``<``, ``>`` become HTML
entities, and Markdown's active characters (``|`` and backticks among
them, and ``[``/``]`` so that no link can be planted) are
backslash-escaped.
"""

from __future__ import annotations

import html
import re

from sponsio_audit.redact import clean
from sponsio_audit.report.data import DECISION_COLUMNS, ReportData, decision_cells

TOP = 50
_ACTIVE = re.compile(r"([\\`*_\[\]|~])")


def md(value: object, limit: int = 120) -> str:
    """Untrusted ``value`` as inert Markdown table-cell text."""
    text = "" if value is None else clean(value, limit)
    return _ACTIVE.sub(r"\\\1", html.escape(text, quote=False))


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def render(data: ReportData) -> str:
    """The Markdown text."""
    n, v = data.totals, data.verdict_counts
    status = "❌" if n["violations"] else "✅"
    lines = [
        f"## {status} sponsio-audit: {n['violations']} violation(s)",
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
        ["contract", "severity", "violations", "traces violated", "events blamed"],
        [
            [
                md(c["id"]),
                md(c["severity"]),
                str(r["violations"]),
                str(r["traces_violated"]),
                str(r["events_blamed"]),
            ]
            for c, r in zip(data.contracts, data.per_contract, strict=True)
        ],
    )
    blamed = data.blamed
    if blamed:
        lines += ["", f"### Violations (first {min(TOP, len(blamed))} of {len(blamed)})", ""]
        lines += _table(
            ["severity", "contract", "trace", "step", "tool", "evidence"],
            [
                [
                    md(x["severity"]),
                    md(x["contract_id"]),
                    md(x["trace_id"]),
                    md(x["seq"]),
                    md(x["tool"]),
                    md(x["evidence"], 300),
                ]
                for x in blamed[:TOP]
            ],
        )
    if data.guard_decisions:
        lines += ["", "### Guard decisions (recorded)", ""]
        lines += _table(
            ["contract", *(c.replace("_", " ") for c in DECISION_COLUMNS)],
            [
                [
                    md(d["contract_id"]) if d["contract_id"] is not None else "*(no contract)*",
                    *(str(n) for n in decision_cells(d)),
                ]
                for d in data.guard_decisions
            ],
        )
    if data.skipped:
        lines += ["", "### Skipped inputs", ""]
        lines += _table(
            ["file", "record", "reason"],
            [[md(s["path"], 200), md(s["record"]), md(s["reason"], 200)] for s in data.skipped],
        )
    return "\n".join(lines) + "\n"
