"""HTML parts of the page that show one trace or the run: timelines and the provenance block.

A timeline is a ``<details>`` per violated trace whose anchor
(``trace-…``) sits on its first inner element, so that following a
``#trace-…`` link opens it even with scripts off. Above the event table,
each blamed step is listed with its span id, contract, reason (the
evidence) and the offending events of the same guarantee. Events come
from ``timeline.rows`` (redacted excerpts); all content is escaped.
"""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

from sponsio_audit.redact import clean
from sponsio_audit.report import timeline
from sponsio_audit.report.data import MAX_TIMELINE_EVENTS, ReportData

_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]+")


def e(value: object, limit: int = 200) -> str:
    """Untrusted ``value`` as HTML text."""
    return html.escape("" if value is None else clean(value, limit))


def anchors(trace_ids: list[str]) -> dict[str, str]:
    """A distinct ``trace-…`` id attribute per trace (readable prefix of the trace id).

    Trace ids that sanitize alike (``a{``, ``a|``) get a suffix from a hash of
    the raw id, and a counter after it should even that name be taken (by
    another trace's readable name, say ``a_-<hash>``), so no two traces share
    an anchor whatever their ids.
    """
    out: dict[str, str] = {}
    used: set[str] = set()
    for i, tid in enumerate(trace_ids):
        base = "trace-" + (_UNSAFE.sub("_", clean(tid, 300))[:80] or str(i))
        name = base
        if name in used:
            raw = str(tid).encode("utf-8", "surrogatepass")
            name = base = f"{base}-{hashlib.sha256(raw).hexdigest()[:8]}"
        k = 1
        while name in used:
            name = f"{base}-{k}"
            k += 1
        used.add(name)
        out[tid] = name
    return out


def _marks(r: dict[str, Any]) -> str:
    return "; ".join(
        f"{label}: {', '.join(r[key])}"
        for key, label in (
            ("blamed", "blamed by"),
            ("offending", "offending for"),
            ("opened", "opened obligation of"),
        )
        if r[key]
    )


def _blamed_steps(mine: list[dict[str, Any]]) -> str:
    """The blamed step of each violation: span id, contract, reason, offending events."""
    items = []
    for b in (v for v in mine if v["blamed"]):
        others = [
            o
            for o in mine
            if not o["blamed"]
            and o["contract_id"] == b["contract_id"]
            and o["guarantee"] == b["guarantee"]
        ]
        offending = "".join(
            f"<li>step {e(o['seq'])} (span <code>{e(o['span_id'])}</code>, "
            f"{e(o['tool'])}): {e(o['evidence'], 300)}</li>"
            for o in others
        )
        opened = (
            f"; obligation opened at step {e(b['opened_seq'])}"
            if b["kind"] == "liveness" and b["opened_seq"] is not None
            else ""
        )
        items.append(
            f'<li><span class="sev-{e(b["severity"], 10)}">{e(b["severity"])}</span> '
            f"<code>{e(b['contract_id'])}</code>: step {e(b['seq'])}, span "
            f"<code>{e(b['span_id'])}</code>, tool {e(b['tool'])}{opened}<br>"
            f'<span class="reason">{e(b["evidence"], 400)}</span>'
            + (
                f"<br>{len(others)} further offending event(s):<ul>{offending}</ul>"
                if others
                else ""
            )
            + "</li>"
        )
    return f'<ul class="blamed-steps">{"".join(items)}</ul>'


def timelines(data: ReportData, anchor_of: dict[str, str]) -> str:
    """Every loaded timeline of a violated trace (``data.events``), each collapsed."""
    parts = []
    for tid, events in data.events.items():
        mine = [v for v in data.violations if v["trace_id"] == tid]
        rows = []
        for r in timeline.rows(events, mine):
            cls = next((k for k in ("blamed", "offending", "opened") if r[k]), "")
            rows.append(
                f'<tr class="{cls}"><td class="num">{r["step"]}</td><td>{e(r["time"])}</td>'
                f'<td class="mono">{e(r["span_id"])}</td>'
                f"<td>{e(r['agent'])}</td><td>{e(r['type'])}</td><td>{e(r['tool'])}</td>"
                f'<td class="mono">{e(r["excerpt"])}</td><td>{e(_marks(r), 400)}</td></tr>'
            )
        capped = (
            f"<p>First {MAX_TIMELINE_EVENTS} events shown; <code>sponsio-audit explain "
            f"--trace {e(tid, 300)}</code> shows every one.</p>"
            if len(events) >= MAX_TIMELINE_EVENTS
            else ""
        )
        contracts = ", ".join(sorted({v["contract_id"] for v in mine}))
        head = "".join(
            f"<th>{h}</th>"
            for h in ("step", "time", "span", "agent", "type", "tool", "args / output", "marks")
        )
        parts.append(
            f'<details class="timeline"><summary><span class="mono">{e(tid, 300)}</span> '
            f'— {e(contracts, 400)}</summary><div id="{anchor_of[tid]}">'
            f"{_blamed_steps(mine)}{capped}"
            f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div></div></details>"
        )
    if not parts:
        return "<p>No violations.</p>"
    violated = len({v["trace_id"] for v in data.violations})
    if len(parts) < violated:
        note = (
            f"<p>Timelines of {len(parts)} of {violated} violated traces; "
            "<code>sponsio-audit explain --trace ID</code> shows any trace.</p>"
        )
    else:
        note = f"<p>Timelines of all {violated} violated traces.</p>"
    return note + "".join(parts)


MAX_INPUTS = 100


def provenance(prov: dict[str, Any]) -> str:
    """The run's provenance: a summary line, the details (command, contract files with their
    sha256, input files with counts) one click away."""
    configs = prov.get("contract_files", [])
    inputs = prov.get("inputs", [])
    head = (
        f"sponsio-audit {e(prov.get('tool_version'))}, semantics {e(prov.get('semantics_version'))}"
        f", run at {e(prov.get('run_at'))}: {len(configs)} contract file(s), "
        f"{len(inputs)} input file(s)"
        + (f", {len(prov['warnings'])} warning(s)" if prov.get("warnings") else "")
    )
    facts = [
        ("tool", f"sponsio-audit {prov.get('tool_version', '')}"),
        ("semantics", prov.get("semantics_version", "")),
        ("run at", prov.get("run_at", "")),
        ("command", " ".join(prov.get("command", []) or [])),
    ]
    dl = "".join(f"<dt>{e(k)}</dt><dd><code>{e(v, 1000)}</code></dd>" for k, v in facts)
    dl += "".join(f"<dt>warning</dt><dd>{e(w, 1000)}</dd>" for w in prov.get("warnings", []))
    items = "".join(
        f"<li><code>{e(c.get('path'), 300)}</code>"
        + (f" (pack <code>{e(c['pack'])}</code>)" if c.get("pack") else "")
        + f": {e(c.get('contracts'))} contract(s), sha256 <code>{e(c.get('sha256'), 64)}</code>"
        "</li>"
        for c in configs
    )
    files = "".join(
        f"<li><code>{e(f.get('path'), 300)}</code> ({e(f.get('format'))}): "
        f"{e(f.get('records'))} records, {e(f.get('skipped'))} skipped, "
        f"sha256 <code>{e(f.get('sha256'), 64)}</code></li>"
        for f in inputs[:MAX_INPUTS]
    )
    more = (
        f"<p>First {MAX_INPUTS} of {len(inputs)} input files; <code>-f json</code> lists all.</p>"
        if len(inputs) > MAX_INPUTS
        else ""
    )
    return (
        f'<section id="provenance"><details><summary>{head}</summary><dl>{dl}</dl>'
        f"<h3>Contract files and packs</h3><ul>{items}</ul>"
        f"<h3>Input files</h3>{more}<ul>{files}</ul></details></section>"
    )
