"""Chat transcripts (OpenAI-style message lists) → LLM and tool events, one trace per run.

A file is a JSON list of messages (one run), a ``{messages, metadata}`` object,
or JSONL of such objects (one run per line). Transcripts carry no times, so
events keep message order (``start_ns`` None). For every assistant message:

- ``llm_request``: prompt = all earlier messages rendered as in ``messages``
  (``"role: text"`` per message), system_prompt = their system messages ("" if none);
  every request but the last has that prompt as the start of the last one's, so it
  carries only its length (``Event.prompt_chars``) and the history is rendered once;
- ``llm_response``: content = the message's text (tool calls excluded), tokens from
  its ``usage`` object when present;
- one ``tool_call`` per ``tool_calls[].function.{name, arguments}`` (arguments a
  JSON string or an object), content = the ``role: tool`` message with that
  ``tool_call_id`` (None when no result was recorded).

Tool calls on a message of another participant (a user simulator's
``tool_calls`` on ``role: user``) are that participant's tool calls: the same
``tool_call`` events, agent = the message's ``name``, else its role.

Run metadata: trace id from ``trace_id``/``run_id``/``id`` (else ``<file>:<record>``),
agent from ``agent``/``agent_id``/``agent_name`` (else None), conversation from
``conversation_id``/``session_id``.

Memory and time: each message is rendered once and a run's events are produced one
at a time (``run_events`` is a generator); the history is joined once, for the last
request, and ``direct.Shared`` stores it once (``prompt_from``/``prompt_chars``), so
the store and the time are linear in the run too.
A run of more than ``Limits.messages`` messages is skipped with that limit named.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sponsio_audit.event import Event
from sponsio_audit.ingest import messages as m
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.limits import DEFAULT, LimitExceeded, Limits
from sponsio_audit.ingest.parsed import Parsed
from sponsio_audit.ingest.values import as_args, as_text, cap, to_count

CONVENTION = "transcript"


def _meta(md: Any, *keys: str) -> str | None:
    if not isinstance(md, dict):
        return None
    for k in keys:
        if md.get(k) is not None:
            return as_text(cap(md[k]))
    return None


def run_events(
    msgs_raw: list[Any], md: Any, trace_id: str, file_id: int, no: int
) -> Iterator[Event]:
    """The events of one run's message list, in order (one prompt rendered at a time)."""
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
    lines: list[str] = []  # the prompt rendering of messages so far (messages.prompt_and_system)
    chars = -1  # len("\n".join(lines)), kept as lines are added
    system: list[str] = []
    last = max((i for i, msg in enumerate(msgs) if msg.role == "assistant"), default=-1)
    for i, (x, msg) in enumerate(zip(raw, msgs, strict=True)):
        if msg.role == "assistant":
            # every earlier request's input is the start of the last one's: rendered once
            prompt = "\n".join(lines) if i == last else None
            shared = None if i == last else max(chars, 0)
            yield from _turn(x, msg, prompt, shared, "\n".join(system), results, base)
        elif msg.calls and msg.role not in ("tool", "system", "developer"):
            who = as_text(cap(x.get("name"))) or msg.role or None
            yield from _calls(msg, results, {**base, "agent": who})
        t = msg.text()
        lines.append(f"{msg.role}: {t}" if msg.role else t)
        chars += len(lines[-1]) + 1
        if msg.role in m.SYSTEM_ROLES:
            system.append(t)


def _turn(
    x: dict[str, Any],
    msg: m.Msg,
    prompt: str | None,
    shared: int | None,
    system: str,
    results: dict[str, str],
    base: dict[str, Any],
) -> Iterator[Event]:
    """The events of one assistant message: request (its prompt, or the length of the
    start of the last request's it is), response, its tool calls."""
    yield Event(
        type="llm_request", prompt=prompt, prompt_chars=shared, system_prompt=system, **base
    )
    u = x.get("usage")
    usage: dict[str, Any] = u if isinstance(u, dict) else {}
    tin = to_count(usage.get("prompt_tokens", usage.get("input_tokens")))
    tout = to_count(usage.get("completion_tokens", usage.get("output_tokens")))
    total = to_count(usage.get("total_tokens"))
    if total is None and tin is not None and tout is not None:
        total = tin + tout
    yield Event(
        type="llm_response",
        content="\n".join(msg.pieces),
        tokens_in=tin,
        tokens_out=tout,
        tokens_total=total,
        **base,
    )
    yield from _calls(msg, results, base)


def _calls(msg: m.Msg, results: dict[str, str], base: dict[str, Any]) -> Iterator[Event]:
    """The tool calls of one message, each with its ``role: tool`` result when recorded."""
    for c in msg.calls:
        yield Event(
            type="tool_call",
            tool=c.name,
            args=as_args(c.arguments),
            content=results.get(c.id) if c.id is not None else None,
            span_id=c.id,
            **base,
        )


def parse(
    recs: Iterable[tuple[int, Any]], file_id: int, trace_id: str, limits: Limits = DEFAULT
) -> Parsed:
    """One trace per run (a list of messages, or each ``{messages, metadata}`` record); a
    trace is an event iterator, read once (``direct.load`` numbers it in order)."""
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
        if len(msgs) > limits.messages:
            why = LimitExceeded("messages", limits.messages, f"run of {len(msgs)} messages")
            out.skipped.append((no, str(why)))
            continue
        tid = _meta(md, "trace_id", "run_id", "id") or f"{trace_id}:{no}"
        out.traces.append(run_events(msgs, md, tid, file_id, no))
        out.trace_ids.append(tid)
    return out
