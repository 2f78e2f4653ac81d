"""Chat transcripts (OpenAI-style message lists) → LLM and tool events, one trace per run.

A file is a JSON list of messages (one run), a ``{messages, metadata}`` object,
or JSONL of such objects (one run per line). Transcripts carry no times, so
events keep message order (``start_ns`` None). For every assistant message:

- ``llm_request``: prompt = all earlier messages rendered as in ``messages``
  (``"role: text"`` per message), system_prompt = their system messages ("" if none);
- ``llm_response``: content = the message's text (tool calls excluded), tokens from
  its ``usage`` object when present;
- one ``tool_call`` per ``tool_calls[].function.{name, arguments}`` (arguments a
  JSON string or an object), content = the ``role: tool`` message with that
  ``tool_call_id`` (None when no result was recorded).

Run metadata: trace id from ``trace_id``/``run_id``/``id`` (else ``<file>:<record>``),
agent from ``agent``/``agent_id``/``agent_name`` (else None), conversation from
``conversation_id``/``session_id``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sponsio_audit.event import Event
from sponsio_audit.ingest import messages as m
from sponsio_audit.ingest.parsed import Parsed
from sponsio_audit.ingest.sniff import BadRecord
from sponsio_audit.ingest.values import as_args, as_text, cap, to_int

CONVENTION = "transcript"


def _meta(md: Any, *keys: str) -> str | None:
    if not isinstance(md, dict):
        return None
    for k in keys:
        if md.get(k) is not None:
            return as_text(cap(md[k]))
    return None


def run_events(msgs_raw: list[Any], md: Any, trace_id: str, file_id: int, no: int) -> list[Event]:
    """The events of one run's message list."""
    raw = [x for x in cap(msgs_raw) if isinstance(x, dict)]
    msgs = [m.to_msg(x) or m.Msg("", (), ()) for x in raw]
    results: dict[str, str] = {}
    for x, msg in zip(raw, msgs, strict=True):
        if x.get("role") == "tool" and x.get("tool_call_id") is not None:
            results.setdefault(str(x["tool_call_id"]), "\n".join(msg.pieces))
    agent = _meta(md, "agent", "agent_id", "agent_name")
    conv = _meta(md, "conversation_id", "session_id")
    base: dict[str, Any] = {
        "trace_id": trace_id,
        "agent": agent,
        "conversation_id": conv,
        "convention": CONVENTION,
        "file_id": file_id,
        "record": no,
    }
    out: list[Event] = []
    for i, (x, msg) in enumerate(zip(raw, msgs, strict=True)):
        if msg.role != "assistant":
            continue
        before = msgs[:i]
        out.append(
            Event(
                type="llm_request",
                prompt=m.prompt_text(before),
                system_prompt=m.system_text(before),
                **base,
            )
        )
        u = x.get("usage")
        usage: dict[str, Any] = u if isinstance(u, dict) else {}
        tin = to_int(usage.get("prompt_tokens", usage.get("input_tokens")))
        tout = to_int(usage.get("completion_tokens", usage.get("output_tokens")))
        total = to_int(usage.get("total_tokens"))
        if total is None and tin is not None and tout is not None:
            total = tin + tout
        out.append(
            Event(
                type="llm_response",
                content="\n".join(msg.pieces),
                tokens_in=tin,
                tokens_out=tout,
                tokens_total=total,
                **base,
            )
        )
        for c in msg.calls:
            out.append(
                Event(
                    type="tool_call",
                    tool=c.name,
                    args=as_args(c.arguments),
                    content=results.get(c.id) if c.id is not None else None,
                    span_id=c.id,
                    **base,
                )
            )
    return out


def parse(recs: Iterable[tuple[int, Any]], file_id: int, trace_id: str) -> Parsed:
    """One trace per run (a list of messages, or each ``{messages, metadata}`` record)."""
    out = Parsed()
    for no, obj in recs:
        out.records += 1
        if isinstance(obj, BadRecord):
            out.skipped.append((no, str(obj)))
            continue
        md: Any = None
        msgs = obj
        if isinstance(obj, dict):
            msgs, md = obj.get("messages"), obj.get("metadata")
        if not isinstance(msgs, list):
            out.skipped.append((no, "no messages list"))
            continue
        tid = _meta(md, "trace_id", "run_id", "id") or f"{trace_id}:{no}"
        out.traces.append(run_events(msgs, md, tid, file_id, no))
    return out
