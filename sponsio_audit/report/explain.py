"""``explain``: one trace as a terminal timeline, then why each violated contract failed.

The timeline (``timeline.rows``) shows step, time, agent, event type, tool
and a redacted args/output excerpt; the blamed event of a violation is
marked ``✗``, further offending events ``!`` and the event that opened a
liveness obligation ``◷``. Below it, per violated contract: the formula of
each violated guarantee, the evidence of every offending event and, for
liveness, the opening event. All trace content is ``rich.text.Text``.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from sponsio_audit.report import timeline
from sponsio_audit.report.data import ReportData
from sponsio_audit.report.terminal import t


def timeline_table(trace_id: str, rows: list[dict[str, Any]]) -> Table:
    """The marked timeline of one trace."""
    table = Table(title=Text(f"trace {trace_id}"), title_justify="left")
    table.add_column("")
    table.add_column("step", justify="right")
    table.add_column("time", no_wrap=True)
    table.add_column("agent", overflow="fold")
    table.add_column("type", overflow="fold")
    table.add_column("tool", overflow="fold")
    table.add_column("args / output", overflow="fold", ratio=1)
    for r in rows:
        mark, style = "", ""
        if r["blamed"]:
            mark, style = "✗", "bold red"
        elif r["offending"]:
            mark, style = "!", "yellow"
        elif r["opened"]:
            mark, style = "◷", "cyan"
        table.add_row(
            Text(mark, style=style),
            t(r["step"]),
            t(r["time"]),
            t(r["agent"], 30),
            t(r["type"]),
            t(r["tool"], 40, style),
            t(r["excerpt"], 160),
        )
    return table


def contract_panel(data: ReportData, cid: str, mine: list[dict[str, Any]]) -> Panel:
    """Why one contract failed on the trace: formula, evidence, opening event."""
    c = data.contract(cid)
    body: list[Text] = []
    if c["description"]:
        body.append(t(c["description"], 300, "italic"))
    for g in sorted({v["guarantee"] for v in mine}):
        rows = [v for v in mine if v["guarantee"] == g]
        first = rows[0]
        body.append(Text.assemble(("formula  ", "bold"), t(first["guarantee_text"], 500)))
        body.append(Text.assemble(("kind     ", "bold"), t(first["kind"])))
        for v in rows:
            tag = "blamed   " if v["blamed"] else "offending"
            body.append(
                Text.assemble((f"{tag} ", "bold"), t(f"step {v['seq']}: "), t(v["evidence"], 300))
            )
        if first["kind"] == "liveness" and first["opened_seq"] is not None:
            body.append(
                Text.assemble(
                    ("opened   ", "bold"), t(f"obligation opened at step {first['opened_seq']}")
                )
            )
    title = Text.assemble(t(cid, 80, "bold"), " ", t(c["severity"], 10))
    return Panel(Group(*body), title=title, title_align="left", expand=False)


def render(
    data: ReportData,
    trace_id: str,
    events: list[dict[str, Any]],
    console: Console,
    contract: str | None = None,
) -> None:
    """Print the explanation of ``trace_id`` (optionally one contract only)."""
    mine = [v for v in data.violations if v["trace_id"] == trace_id]
    if contract is not None:
        mine = [v for v in mine if v["contract_id"] == contract]
    console.print(timeline_table(trace_id, timeline.rows(events, mine)))
    if not mine:
        what = f"contract {contract}" if contract else "any contract"
        console.print(Text(f"No violation of {what} in this trace."))
        return
    for cid in sorted({v["contract_id"] for v in mine}):
        console.print(contract_panel(data, cid, [v for v in mine if v["contract_id"] == cid]))
