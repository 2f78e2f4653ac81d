"""Sponsio session logs (``~/.sponsio/sessions/<agent>/<ts>.jsonl``) → tool calls and decisions.

One line per (tool call × constraint) decision: ``ts``, ``agent_id``, ``action``,
``constraint``/``contract_id``, ``result``, optionally ``args`` (redacted JSON
object, written by this project's guard), ``event_type`` and ``message``.
Lines are grouped by (ts, action) into one event (a tool_call unless
``event_type`` names another event type), except lines that prove two calls: another
``seq`` (the guard numbers its calls), or the same constraint decided twice (one line
per call and constraint: the second is the next call's; a coarse clock gives two calls
one ts); args are taken from the first line of the group that records them, None when
none does. Every line is also a row of
``decisions``. A file is one trace.

A line whose action is ``<evidence:PRED>`` is Sponsio's claim verdict for
predicate PRED: an ``evidence`` event with ``tool`` PRED (its verdict and action
are in ``args`` only when the line records them; Sponsio's own log does not).

A call that the guard blocked or redirected (some line of its group has that
``result``) never ran: it is a ``tool_attempt`` event (SEMANTICS.md §4.2).
``result`` may also be Sponsio's own object form ``{"action": …, "message": …}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sponsio_audit.event import ATTEMPT_RESULTS, EVENT_TYPES, Event
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.parsed import Parsed, ts_ns
from sponsio_audit.ingest.values import as_args, as_text, cap

CONVENTION = "sponsio_session"


def parse(recs: Iterable[tuple[int, Any]], file_id: int, trace_id: str) -> Parsed:
    """Events (one trace) and decisions of a session log's lines."""
    out = Parsed()
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    seen: dict[tuple[Any, ...], int] = {}  # (ts, action, seq, contract) → lines so far
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
        seq = obj.get("seq")
        seq = seq if seq.__class__ is int else None
        contract = obj.get("contract_id", obj.get("constraint"))
        call = (as_text(ts), action, seq)
        again = (*call, as_text(cap(contract)))
        key = (*call, seen.get(again, 0))  # the same decision twice: another call
        seen[again] = key[-1] + 1
        g = groups.get(key)
        if g is None:
            et = obj.get("event_type")
            pred = evidence_predicate(action)
            g = groups[key] = {
                "record": no,
                "ts": ts_ns(ts),
                "agent": agent,
                "args": None,
                "type": "evidence"
                if pred is not None
                else et
                if et in EVENT_TYPES
                else "tool_call",
                "tool": pred if pred is not None else action,
                "conv": as_text(cap(obj.get("conversation_id"))),
            }
        if g["args"] is None and obj.get("args") is not None:
            g["args"] = as_args(cap(obj.get("args")))
        raw, message = obj.get("result"), obj.get("message")
        if isinstance(raw, dict):  # Sponsio's own log: {"action": ..., "message": ...}
            message = message if message is not None else raw.get("message")
            raw = raw.get("action")
        result = as_text(cap(raw))
        if result in ATTEMPT_RESULTS and g["type"] == "tool_call":
            g["type"] = "tool_attempt"
        out.decisions.append(
            (
                file_id,
                no,
                trace_id,
                ts_ns(ts),
                agent,
                action,
                as_text(cap(contract)),
                result,
                as_text(cap(message)),
            )
        )
    out.traces.append(
        [
            Event(
                type=g["type"],
                tool=g["tool"],
                args=g["args"],
                agent=g["agent"],
                start_ns=g["ts"],
                trace_id=trace_id,
                conversation_id=g["conv"],
                convention=CONVENTION,
                file_id=file_id,
                record=g["record"],
            )
            for g in groups.values()
        ]
    )
    return out


def evidence_predicate(action: str | None) -> str | None:
    """The predicate of Sponsio's evidence action ``<evidence:PRED>`` (a claim verdict fed
    to its monitor), else None."""
    if action is None or not (action.startswith("<evidence:") and action.endswith(">")):
        return None
    return action[len("<evidence:") : -1]
