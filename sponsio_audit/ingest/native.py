"""Sponsio native / shield-trace event JSONL (``{ts, agent, type, tool, args, content}``) → events.

Lines may also be one ``{"events": [...]}`` document. The event fields of
``event.Event`` are taken when present (``prompt``, ``system_prompt``,
``target``, token counts, ``duration_ns``, ``span_id``, ``conversation_id``);
``args`` that are not a JSON object are wrapped as ``{"input": value}``. A
file is one trace; an entry whose ``type`` is not an event type is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sponsio_audit.event import EVENT_TYPES, Event
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.parsed import Parsed, ts_ns
from sponsio_audit.ingest.values import as_args, as_text, cap, to_count

CONVENTION = "sponsio_native"


def _first(*values: Any) -> Any:
    """The first value that is not None (a field written as null is not recorded)."""
    return next((v for v in values if v is not None), None)


def _evidence_key(et: str, d: dict[str, Any]) -> Any:
    """The predicate of a Sponsio ``evidence`` event, which Sponsio's Event keeps in ``key``
    (held in ``tool`` here, as the session log's ``<evidence:PRED>`` is)."""
    return d.get("key") if et == "evidence" else None


def _event(d: dict[str, Any], trace_id: str, file_id: int, no: int) -> Event | str:
    et = d.get("type", d.get("event_type"))
    if et not in EVENT_TYPES:
        return f"unknown event type {str(et)[:80]!r}"
    text = {k: as_text(cap(d.get(k))) for k in ("prompt", "system_prompt", "target", "span_id")}
    content = d.get("content", d.get("result"))
    return Event(
        type=et,
        tool=as_text(cap(_first(d.get("tool"), d.get("tool_name"), _evidence_key(et, d)))),
        args=as_args(cap(d.get("args"))),
        content=as_text(cap(content)),
        prompt=text["prompt"],
        system_prompt=text["system_prompt"],
        agent=as_text(cap(d.get("agent", d.get("agent_id")))),
        target=text["target"],
        tokens_in=to_count(d.get("tokens_in")),
        tokens_out=to_count(d.get("tokens_out")),
        tokens_total=to_count(d.get("tokens_total")),
        start_ns=ts_ns(d.get("ts", d.get("start_ns"))),
        duration_ns=to_count(d.get("duration_ns")),
        trace_id=trace_id,
        span_id=text["span_id"],
        conversation_id=as_text(cap(d.get("conversation_id"))),
        convention=CONVENTION,
        file_id=file_id,
        record=no,
    )


def parse(recs: Iterable[tuple[int, Any]], file_id: int, trace_id: str) -> Parsed:
    """Events (one trace) of a native trace file."""
    out = Parsed()
    trace: list[Event] = []
    for no, obj in recs:
        out.records += 1
        if isinstance(obj, BadRecord):
            out.skipped.append((no, str(obj)))
            continue
        items = obj.get("events") if isinstance(obj, dict) and "events" in obj else obj
        items = items if isinstance(items, list) else [items]
        reasons = []
        for d in items:
            e = (
                _event(d, trace_id, file_id, no)
                if isinstance(d, dict)
                else "entry is not an object"
            )
            if isinstance(e, str):
                reasons.append(e)
            else:
                trace.append(e)
        if reasons and len(reasons) == len(items):
            out.skipped.append((no, reasons[0]))
        elif reasons:
            out.skipped.append((no, f"{len(reasons)} of {len(items)} entries: {reasons[0]}"))
    out.traces.append(trace)
    return out
