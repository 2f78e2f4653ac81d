"""The ``table`` format: a rich summary panel, per-contract table, top violations, the guard's
recorded decisions (when the inputs hold any), skipped files.

Every piece of trace or configuration content is passed as a
``rich.text.Text`` built from ``evidence.clean`` output: ``Text`` never
interprets markup, and ``clean`` drops control characters, so nothing
from a trace can inject ANSI escapes or rich markup.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from sponsio_audit.redact import clean
from sponsio_audit.report import ranking
from sponsio_audit.report.data import DECISION_COLUMNS, ReportData, decision_cells
from sponsio_audit.report.text import NO_REASON

TOP = ranking.DEFAULT_LIMIT
SEE_ALL = "--limit 0 lists all"
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


def _title(shown: int, total: int) -> str:
    return f"Top violations ({ranking.shown_of(shown, total, SEE_ALL)})"


def violations_list(data: ReportData, top: int = TOP) -> Group:
    """The top ``top`` violations (``ranking.top``) as two-line entries (narrow consoles)."""
    blamed = data.blamed
    shown = ranking.top(blamed, top)
    lines = [Text(_title(len(shown), len(blamed)), style="italic")]
    for v in shown:
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
    """The top ``top`` violations (by severity, spread across contracts): severity, contract,
    trace (prefix), step, tool, evidence."""
    blamed = data.blamed
    shown = ranking.top(blamed, top)
    table = Table(title=_title(len(shown), len(blamed)), title_justify="left")
    table.add_column("severity")
    table.add_column("contract", overflow="fold")
    table.add_column("trace", no_wrap=True, min_width=TRACE_CHARS)
    table.add_column("step", justify="right")
    table.add_column("tool", overflow="fold")
    table.add_column("evidence", ratio=1)
    for v in shown:
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


def undecided_table(data: ReportData, top: int = TOP) -> Table:
    """Unverifiable and skipped verdicts (first ``top``) with the recorded reason of each."""
    rows = data.undecided
    shown = rows if not top else rows[:top]
    title = f"Unverifiable and skipped ({ranking.shown_of(len(shown), len(rows), SEE_ALL)})"
    table = Table(title=title, title_justify="left")
    table.add_column("contract", overflow="fold")
    table.add_column("trace", no_wrap=True, min_width=TRACE_CHARS)
    table.add_column("verdict")
    table.add_column("reason", ratio=1, overflow="fold")
    for u in shown:
        table.add_row(
            t(u["contract_id"], 60),
            t(short_trace(str(u["trace_id"]))),
            t(u["verdict"], 20, "yellow"),
            t(u.get("reason") or NO_REASON, 400),
        )
    return table


def provenance_table(prov: dict[str, Any]) -> Table:
    """What ran: tool and semantics version, time, command line, contract and input files,
    the audit's warnings."""
    table = Table(title="Provenance", title_justify="left", show_header=False)
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_row("tool", t(f"sponsio-audit {prov.get('tool_version', '')}", 60))
    table.add_row("semantics", t(prov.get("semantics_version", ""), 40))
    table.add_row("run at", t(prov.get("run_at", ""), 40))
    table.add_row("command", t(" ".join(prov.get("command") or []), 600))
    for c in prov.get("contract_files", []):
        name = c.get("pack") or c.get("path")
        table.add_row("contracts", t(f"{name}  sha256 {c.get('sha256')}", 400))
    for f in prov.get("inputs", []):
        table.add_row(
            "input",
            t(
                f"{f.get('path')}  {f.get('records')} records, {f.get('skipped')} skipped, "
                f"sha256 {f.get('sha256')}",
                400,
            ),
        )
    for w in prov.get("warnings", []):
        table.add_row("warning", t(w, 600, "yellow"))
    return table


def render(data: ReportData, console: Console, top: int = TOP) -> None:
    """Print the whole ``table`` report on ``console`` (the top ``top`` violations; 0: all)."""
    console.print(summary_panel(data))
    console.print(contract_table(data))
    if data.blamed:
        wide = console.width >= WIDE
        view = violations_table if wide else violations_list
        console.print(view(data, top))
    if data.guard_decisions:
        console.print(decisions_table(data))
    if data.undecided:
        console.print(undecided_table(data, top))
    if data.skipped:
        console.print(skipped_table(data))
    prov = data.provenance
    if prov:
        console.print(provenance_table(prov))
