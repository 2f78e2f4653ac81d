"""The event model of SEMANTICS.md §1, shared by ingest, atoms and the guard.

``Event`` is one normalised step of an agent trace; ``EVENT_SCHEMA`` is the
Arrow schema of the ``events`` table in the store (ARCHITECTURE.md), one
column per field. "Missing" is ``None`` everywhere (SEMANTICS.md §5): an
instrumentation that did not record arguments gives ``args=None``, never
``{}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

EVENT_TYPES = (
    "tool_call",
    "llm_request",
    "llm_response",
    "data_read",
    "data_write",
    "message",
    "delegation",
    "context_update",
    "tool_attempt",
    "evidence",
)
"""``tool_attempt`` is a call a guard blocked or redirected: it never ran, and no
atom is grounded from it (SEMANTICS.md §4.2, "Attempts"). ``evidence`` is a
claim verdict (Sponsio's ``EvidenceResult.to_event``): ``tool`` holds the
predicate, ``args`` the recorded ``verdict`` and ``action``."""
ATTEMPT_RESULTS = frozenset({"blocked", "redirected"})
"""Guard results that mean the call did not run."""


@dataclass(frozen=True)
class Event:
    """One step of a trace.

    ``args`` is a JSON object in its recorded key order, or None when not
    recorded. ``content`` is the tool result or LLM output text; ``prompt``
    the LLM input text; ``system_prompt`` the system message text of an LLM
    request ("" when the request recorded no system message, None when the
    input was not recorded). ``target`` is the receiving agent of a message
    or delegation, and the writing agent of the data a data_read reads.
    For a context_update, ``args`` holds the keys and values set.
    For a data_write, ``args`` holds the fields written (``contains(f)``).
    For an evidence event, ``tool`` is the claim's predicate and ``args`` holds
    the verdict and policy action.
    ``prompt_chars`` set with ``prompt`` None (transcripts only) says the input is the
    first ``prompt_chars`` characters of the agent's next LLM request's prompt in the
    trace, so a reader that re-sends its history need not render it again; ingest
    stores it as ``EVENT_SCHEMA``'s ``prompt_from``/``prompt_chars``.
    """

    type: str
    tool: str | None = None
    args: dict[str, Any] | None = None
    content: str | None = None
    prompt: str | None = None
    system_prompt: str | None = None
    agent: str | None = None
    target: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_total: int | None = None
    start_ns: int | None = None
    duration_ns: int | None = None
    trace_id: str = ""
    seq: int = 0
    span_id: str | None = None
    conversation_id: str | None = None
    convention: str | None = None
    inferred: bool = False
    file_id: int | None = None
    record: int | None = None
    prompt_chars: int | None = None


def args_text(args: dict[str, Any] | None) -> str | None:
    """Compact JSON of the arguments in recorded key order, non-ASCII kept (SEMANTICS.md §5)."""
    if args is None:
        return None
    return json.dumps(args, separators=(",", ":"), ensure_ascii=False)


EVENT_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("span_id", pa.string()),
        pa.field("type", pa.string(), nullable=False),
        pa.field("agent", pa.string()),
        pa.field("tool", pa.string()),
        # compact JSON text of the args object (args_text), NULL when missing
        pa.field("args", pa.string()),
        pa.field("content", pa.string()),
        pa.field("prompt", pa.string()),
        pa.field("system_prompt", pa.string()),
        pa.field("tokens_in", pa.int64()),
        pa.field("tokens_out", pa.int64()),
        pa.field("tokens_total", pa.int64()),
        pa.field("start_ns", pa.int64()),
        pa.field("duration_ns", pa.int64()),
        pa.field("target", pa.string()),
        pa.field("conversation_id", pa.string()),
        pa.field("convention", pa.string()),
        pa.field("inferred", pa.bool_()),
        pa.field("file_id", pa.int64()),
        pa.field("record", pa.int64()),
        # an LLM request whose input is the start of a later request's input stores it once:
        # prompt NULL, prompt_from = that request's seq, prompt_chars = characters taken
        pa.field("prompt_from", pa.int64()),
        pa.field("prompt_chars", pa.int64()),
    ]
)
"""Columns of the ``events`` table; rows sorted by (trace_id, seq).

``prompt_from``/``prompt_chars`` store each transcript message once (issue 13): the
input of a row with ``prompt_from`` set is the first ``prompt_chars`` characters of
the ``prompt`` of the row of the same trace whose ``seq`` is ``prompt_from``
(``shared_prompt``); producers that never share may leave both columns out
(``OPTIONAL_COLUMNS``: filled with nulls)."""
OPTIONAL_COLUMNS = ("prompt_from", "prompt_chars")
"""Trailing ``EVENT_SCHEMA`` columns a producer may omit (then null)."""


def shared_prompt(holder: str | None, chars: int | None) -> str | None:
    """The input of a row that shares ``holder``'s prompt: its first ``chars`` characters,
    None (input missing) when the holder has no prompt or a shorter one."""
    if holder is None or chars is None or chars < 0 or len(holder) < chars:
        return None
    return holder[:chars]


def resolve_prompts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` rows with every shared prompt written out (``prompt_from`` resolved
    within the rows' trace), for readers that need each row's text (the reference engine)."""
    by_key = {(r.get("trace_id"), r.get("seq")): r for r in rows if r.get("prompt") is not None}
    for r in rows:
        if r.get("prompt") is None and r.get("prompt_from") is not None:
            h = by_key.get((r.get("trace_id"), r["prompt_from"]))
            r["prompt"] = shared_prompt(None if h is None else h["prompt"], r.get("prompt_chars"))
    return rows


def event_row(e: Event) -> dict[str, Any]:
    """The ``events`` row of an event (args as compact JSON text)."""
    return {
        "trace_id": e.trace_id,
        "seq": e.seq,
        "span_id": e.span_id,
        "type": e.type,
        "agent": e.agent,
        "tool": e.tool,
        "args": args_text(e.args),
        "content": e.content,
        "prompt": e.prompt,
        "system_prompt": e.system_prompt,
        "tokens_in": e.tokens_in,
        "tokens_out": e.tokens_out,
        "tokens_total": e.tokens_total,
        "start_ns": e.start_ns,
        "duration_ns": e.duration_ns,
        "target": e.target,
        "conversation_id": e.conversation_id,
        "convention": e.convention,
        "inferred": e.inferred,
        "file_id": e.file_id,
        "record": e.record,
        "prompt_from": None,
        "prompt_chars": e.prompt_chars,
    }


def event_from_row(row: dict[str, Any]) -> Event:
    """Inverse of ``event_row`` (args parsed back preserving key order)."""
    raw = row.get("args")
    return Event(
        type=row["type"],
        tool=row.get("tool"),
        args=json.loads(raw) if raw is not None else None,
        content=row.get("content"),
        prompt=row.get("prompt"),
        system_prompt=row.get("system_prompt"),
        agent=row.get("agent"),
        target=row.get("target"),
        tokens_in=row.get("tokens_in"),
        tokens_out=row.get("tokens_out"),
        tokens_total=row.get("tokens_total"),
        start_ns=row.get("start_ns"),
        duration_ns=row.get("duration_ns"),
        trace_id=row.get("trace_id") or "",
        seq=row.get("seq") or 0,
        span_id=row.get("span_id"),
        conversation_id=row.get("conversation_id"),
        convention=row.get("convention"),
        inferred=bool(row.get("inferred")),
        file_id=row.get("file_id"),
        record=row.get("record"),
    )
