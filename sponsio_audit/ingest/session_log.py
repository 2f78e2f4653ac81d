"""Sponsio session logs (``~/.sponsio/sessions/<agent>/<ts>.jsonl``) → tool calls and decisions.

One line per (tool call × constraint) decision: ``ts``, ``agent_id``, ``action``,
``constraint``/``contract_id``, ``result``, optionally ``args`` (redacted JSON
object, written by this project's guard), ``event_type`` and ``message``.
Lines are grouped by (ts, action) into one event (a tool_call unless
``event_type`` names another event type); args are taken from the first line of
the group that records them, None when none does. Every line is also a row of
``decisions``. A file is one trace.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sponsio_audit.event import EVENT_TYPES, Event
from sponsio_audit.ingest.parsed import Parsed, ts_ns
from sponsio_audit.ingest.sniff import BadRecord
from sponsio_audit.ingest.values import as_args, as_text, cap

CONVENTION = "sponsio_session"


def parse(recs: Iterable[tuple[int, Any]], file_id: int, trace_id: str) -> Parsed:
    """Events (one trace) and decisions of a session log's lines."""
    out = Parsed()
    groups: dict[tuple[Any, Any], dict[str, Any]] = {}
    for no, obj in recs:
        out.records += 1
        if isinstance(obj, BadRecord):
            out.skipped.append((no, str(obj)))
            continue
        if not isinstance(obj, dict) or "action" not in obj:
            out.skipped.append((no, "not a session log line (no action)"))
            continue
        ts, action = obj.get("ts"), as_text(cap(obj.get("action")))
        agent = as_text(cap(obj.get("agent_id")))
        key = (as_text(ts), action)
        g = groups.get(key)
        if g is None:
            et = obj.get("event_type")
            g = groups[key] = {
                "record": no,
                "ts": ts_ns(ts),
                "agent": agent,
                "args": None,
                "type": et if et in EVENT_TYPES else "tool_call",
                "conv": as_text(cap(obj.get("conversation_id"))),
            }
        if g["args"] is None and obj.get("args") is not None:
            g["args"] = as_args(cap(obj.get("args")))
        contract = obj.get("contract_id", obj.get("constraint"))
        out.decisions.append(
            (
                file_id,
                no,
                trace_id,
                ts_ns(ts),
                agent,
                action,
                as_text(cap(contract)),
                as_text(cap(obj.get("result"))),
                as_text(cap(obj.get("message"))),
            )
        )
    out.traces.append(
        [
            Event(
                type=g["type"],
                tool=action,
                args=g["args"],
                agent=g["agent"],
                start_ns=g["ts"],
                trace_id=trace_id,
                conversation_id=g["conv"],
                convention=CONVENTION,
                file_id=file_id,
                record=g["record"],
            )
            for (_, action), g in groups.items()
        ]
    )
    return out
