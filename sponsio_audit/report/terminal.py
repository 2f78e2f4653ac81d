"""The ``table`` format: a rich summary panel, per-contract table, top violations, the guard's
recorded decisions (when the inputs hold any), skipped files.

Every piece of trace or configuration content is passed as a
``rich.text.Text`` built from ``evidence.clean`` output: ``Text`` never
interprets markup, and ``clean`` drops control characters, so nothing
from a trace can inject ANSI escapes or rich markup.
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from sponsio_audit.redact import clean
from sponsio_audit.report.data import DECISION_COLUMNS, ReportData, decision_cells

TOP = 20
WIDE = 120  # narrower consoles get the violations as a two-line list
TRACE_CHARS = 12  # trace ids are shown by prefix; `explain --trace PREFIX` accepts it
_SEV_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}


def short_trace(trace_id: str) -> str:
    """A prefix of ``trace_id`` that still tells traces apart: ``TRACE_CHARS`` characters
    after any ``<format>:`` head (session-log and native trace ids carry one)."""
    head, sep, _ = trace_id.rpartition(":")
    return trace_id[: len(head) + len(sep) + TRACE_CHARS]


def t(value: object, limit: int = 80, style: str = "") -> Text:
    """Untrusted ``value`` as inert text (control characters removed, capped)."""
    return Text("" if value is None else clean(value, limit), style=style)


def summary_panel(data: ReportData) -> Panel:
    """Totals of the inputs and the verdict counts."""
    n, v = data.totals, data.verdict_counts
    inputs = (
        f"files {n['files']}  spans {n['spans']}  events {n['events']}  "
        f"skipped {n['skipped']}  traces {n['traces']}  contracts {n['contracts']}"
    )
    line = Text()
    for label, key, style in (
        ("pass", "pass", "green"),
        ("violated", "violated", "bold red"),
        ("unverifiable", "unverifiable", "yellow"),
        ("not applicable", "not_applicable", "dim"),
        ("skipped", "skipped", "dim"),
    ):
        line.append(f"{label} ", style="bold")
        line.append(f"{v.get(key, 0)}  ", style=style)
    body = [Text(inputs), line, Text(f"violations {n['violations']}", style="bold")]
    if data.suppressed:
        body.append(Text(f"{data.suppressed} known violation(s) suppressed by the baseline"))
    return Panel(Group(*body), title="sponsio-audit", expand=False)


def contract_table(data: ReportData) -> Table:
    """One row per contract: severity, violations, traces violated, events blamed, verdicts."""
    table = Table(title="Contracts", title_justify="left")
    table.add_column("contract", overflow="fold")
    table.add_column("severity")
    table.caption = "verdicts: pass / unverifiable / not applicable / skipped"
    table.caption_justify = "left"
    for name in ("violations", "traces", "events", "verdicts"):
        table.add_column(name, justify="right")
    for c, row in zip(data.contracts, data.per_contract, strict=True):
        vc = row["verdicts"]
        table.add_row(
            t(c["id"], 60),
            t(c["severity"], 10, _SEV_STYLE.get(c["severity"], "")),
            t(row["violations"], style="bold red" if row["violations"] else ""),
            t(row["traces_violated"]),
            t(row["events_blamed"]),
            t(f"{vc['pass']}/{vc['unverifiable']}/{vc['not_applicable']}/{vc['skipped']}"),
        )
    return table


def violations_list(data: ReportData, top: int = TOP) -> Group:
    """The first ``top`` violations as two-line entries (for consoles narrower than ``WIDE``)."""
    blamed = data.blamed
    lines = [Text(f"Top violations ({min(top, len(blamed))} of {len(blamed)})", style="italic")]
    for v in blamed[:top]:
        head = Text.assemble(
            t(v["severity"], 10, _SEV_STYLE.get(v["severity"], "")),
            " ",
            t(v["contract_id"], 60, "bold"),
            " · trace ",
            t(short_trace(str(v["trace_id"]))),
            f" · step {v['seq']} · ",
            t(v["tool"], 40),
        )
        lines += [head, Text.assemble("    ", t(v["evidence"], 300))]
    return Group(*lines)


def violations_table(data: ReportData, top: int = TOP) -> Table:
    """The first ``top`` violations: severity, contract, trace (prefix), step, tool, evidence."""
    blamed = data.blamed
    title = f"Top violations ({min(top, len(blamed))} of {len(blamed)})"
    table = Table(title=title, title_justify="left")
    table.add_column("severity")
    table.add_column("contract", overflow="fold")
    table.add_column("trace", no_wrap=True, min_width=TRACE_CHARS)
    table.add_column("step", justify="right")
    table.add_column("tool", overflow="fold")
    table.add_column("evidence", ratio=1)
    for v in blamed[:top]:
        table.add_row(
            t(v["severity"], 10, _SEV_STYLE.get(v["severity"], "")),
            t(v["contract_id"], 60),
            t(short_trace(str(v["trace_id"]))),
            t(v["seq"]),
            t(v["tool"], 40),
            t(v["evidence"], 200),
        )
    return table


def decisions_table(data: ReportData) -> Table:
    """The guard's recorded decisions: one row per contract id, one column per result.

    Only the result columns with a count show (and ``total``), so that the
    table fits a narrow console; the json format has every column.
    """
    rows = [(r["contract_id"], decision_cells(r)) for r in data.guard_decisions]
    last = len(DECISION_COLUMNS) - 1
    keep = [i for i in range(last) if any(c[i] for _, c in rows)] + [last]
    table = Table(title="Guard decisions (recorded)", title_justify="left")
    table.add_column("contract", overflow="fold", min_width=20)
    for i in keep:
        table.add_column(DECISION_COLUMNS[i], justify="right", no_wrap=True)
    styles = {"blocked": "bold red", "escalated": "magenta", "warned": "yellow"}
    for cid, cells in rows:
        shown = [
            t(cells[i], style=styles.get(DECISION_COLUMNS[i], "") if cells[i] else "") for i in keep
        ]
        table.add_row(t(cid, 60) if cid is not None else t("(no contract)", style="dim"), *shown)
    return table


def skipped_table(data: ReportData) -> Table:
    """Skipped files and records with their reasons."""
    table = Table(title="Skipped inputs", title_justify="left")
    for name in ("file", "record", "reason"):
        table.add_column(name)
    for s in data.skipped:
        table.add_row(t(s["path"], 100), t(s["record"]), t(s["reason"], 200))
    return table


def render(data: ReportData, console: Console) -> None:
    """Print the whole ``table`` report on ``console``."""
    console.print(summary_panel(data))
    console.print(contract_table(data))
    if data.blamed:
        wide = console.width >= WIDE
        console.print(violations_table(data) if wide else violations_list(data))
    if data.guard_decisions:
        console.print(decisions_table(data))
    if data.skipped:
        console.print(skipped_table(data))
