"""``sponsio-audit explain``: one trace as a timeline, the blamed events, and why.

``--trace`` takes a trace id or any unique, case-insensitive prefix of
one; each event shows its span id and the file and record it was read
from. ``--db`` reads a stored audit read-only.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from sponsio_audit.cli import audited, listing
from sponsio_audit.cli.common import (
    AgentOpt,
    ContractsOpt,
    GroupBy,
    GroupByOpt,
    JobsOpt,
    ListFormat,
    ListFormatOpt,
    PackOpt,
    UsageProblem,
    guarded,
    own_pyarrow,
)
from sponsio_audit.redact import inert

MAX_EVENTS = 500
COLUMNS = ("mark", "step", "time", "agent", "type", "tool", "span", "source", "args / output")
WHOLE = ("step", "time", "agent", "type", "tool", "span", "source")  # never wrapped or cut


def _events(store: Any, trace_id: str) -> list[dict[str, Any]]:
    from sponsio_audit.ingest.store import prompt_sql

    return audited.rows(
        store,
        "SELECT e.seq, e.start_ns, e.agent, e.type, e.tool, e.args, e.content, "
        f"{prompt_sql('e')} AS prompt, e.span_id, e.record, f.path "
        "FROM events e LEFT JOIN files f USING (file_id) "
        "WHERE e.trace_id = ? ORDER BY e.seq LIMIT ?",
        [trace_id, MAX_EVENTS],
    )


def _mark(r: dict[str, Any]) -> str:
    return "✗" if r["blamed"] else "!" if r["offending"] else "◷" if r["opened"] else ""


def explain(
    paths: audited.PathsArg = None,
    trace: Annotated[
        str, typer.Option("--trace", "-t", help="Trace id, or a unique case-insensitive prefix.")
    ] = "",
    contract: Annotated[str | None, typer.Option("--contract", help="Only this contract.")] = None,
    contracts: ContractsOpt = None,
    pack: PackOpt = None,
    db: audited.ReadDbOpt = None,
    group_by: GroupByOpt = GroupBy.trace,
    agent: AgentOpt = None,
    jobs: JobsOpt = 0,
    fmt: ListFormatOpt = ListFormat.table,
) -> None:
    """Show one trace as a timeline, with the blamed events and why each contract failed.

    Example: sponsio-audit explain traces/ --trace 08463ceb --contract coder.no_destructive_shell

    Exit codes: 0; 2 when the trace is unknown or ambiguous, the contract unknown,
    or the input cannot be read.
    """
    own_pyarrow()
    from sponsio_audit.report import timeline
    from sponsio_audit.report.data import load

    with guarded(db):
        if not trace:
            raise UsageProblem(["--trace ID is needed (`sponsio-audit traces PATH` lists them)"])
        store = audited.open_audit(
            paths or [], db, contracts or [], pack or [],
            group_by=group_by.value, agent=agent, jobs=jobs,
        )  # fmt: skip
        try:
            tid = audited.find_trace(store, trace)
            try:
                data = load(store, timelines=False)
            except LookupError as e:
                raise UsageProblem([f"{db}: {e}" if db else str(e)]) from None
            events = _events(store, tid)
        finally:
            store.close()
        known = [c["id"] for c in data.contracts]
        if contract is not None and contract not in known:
            shown = ", ".join(known[:8]) + (", …" if len(known) > 8 else "")
            raise UsageProblem([f"unknown contract {contract!r}; contracts in this audit: {shown}"])
    mine = [v for v in data.violations if v["trace_id"] == tid]
    if contract is not None:
        mine = [v for v in mine if v["contract_id"] == contract]
    marked = timeline.rows(events, mine)
    table = [
        (
            _mark(r),
            r["step"],
            r["time"],
            r["agent"],
            r["type"],
            r["tool"],
            r["span_id"],
            f"{e['path']}:{e['record']}" if e["path"] is not None else "",
            r["excerpt"],
        )
        for r, e in zip(marked, events, strict=True)
    ]
    if fmt == ListFormat.json:
        _json(tid, marked, events, mine)
        return
    rich = listing.show(f"trace {tid}", COLUMNS, table, whole=WHOLE)
    _why(data, tid, mine, contract, rich)


def _json(
    tid: str, marked: list[dict[str, Any]], events: list[dict[str, Any]], mine: list[dict[str, Any]]
) -> None:
    import json

    doc = {
        "trace_id": tid,
        "events": [
            {**r, "file": e["path"], "record": e["record"]}
            for r, e in zip(marked, events, strict=True)
        ],
        "violations": [
            {
                k: v.get(k)
                for k in (
                    "contract_id", "guarantee", "guarantee_text", "kind", "severity", "seq",
                    "blamed", "span_id", "tool", "evidence", "opened_seq", "record", "path",
                )
            }
            for v in mine
        ],
    }  # fmt: skip
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")


def _why(data: Any, tid: str, mine: list[dict[str, Any]], contract: str | None, rich: bool) -> None:
    """Per violated contract: formula, kind, blamed and offending events (panels when ``rich``,
    plain lines otherwise, like the timeline above)."""
    if not mine:
        what = f"contract {contract}" if contract else "any contract"
        sys.stdout.write(f"No violation of {what} in trace {inert(tid)}.\n")
        return
    cids = sorted({v["contract_id"] for v in mine})
    if rich:
        from rich.console import Console

        from sponsio_audit.report.explain import contract_panel

        console = Console(highlight=False)
        for cid in cids:
            console.print(contract_panel(data, cid, [v for v in mine if v["contract_id"] == cid]))
        return
    cell = listing.cell
    for cid in cids:
        c = data.contract(cid)
        sys.stdout.write(f"{cell(cid)} ({cell(c['severity'])})\n")
        for v in (v for v in mine if v["contract_id"] == cid):
            tag = "blamed" if v["blamed"] else "offending"
            sys.stdout.write(
                f"  {tag} step {v['seq']} span {cell(v['span_id'])}: {cell(v['evidence'])}\n"
                f"    formula: {cell(v['guarantee_text'])} ({cell(v['kind'])})\n"
            )
            if v["blamed"] and v["kind"] == "liveness" and v["opened_seq"] is not None:
                sys.stdout.write(f"    obligation opened at step {v['opened_seq']}\n")
