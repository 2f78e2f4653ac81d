"""GenAI message JSON of the usual shape read by typed ``msgspec`` structs: ``messages``' fast path.

``gen_ai.input.messages`` / ``gen_ai.output.messages`` are JSON text holding a list
of ``{role, parts: [{type, content} | {type: tool_call, id, name, arguments} |
{type: tool_call_response, id, response}]}``. ``messages.input_fields`` and
``output_fields`` parse that text with orjson into dicts and walk them (``_walk``);
here it is decoded into structs (no dict per message and part, no key hashing; the
objects cheaper to free) and walked the same way, to the same facts.

Only that shape is read: any other (an unknown key, a value of another type, a null
where a string is expected, a message without ``parts``, text that is not a list of
objects, invalid JSON, a lone surrogate, nesting that could reach orjson's depth
limit) makes ``input_fields``/``output_fields`` here return None, and the caller reads
the text the old way, so the facts of a recorded value never depend on which path
read it. A call's ``arguments`` and a ``response`` are kept as raw JSON and parsed by
orjson, as the old path parses them (the same values, big or odd numbers included).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from sponsio_audit.ingest.values import as_args, as_text, dumps

SYSTEM_ROLES = frozenset({"system", "developer"})
"""Roles whose text is the system prompt (here, as ``messages`` imports this module)."""


def call_line(name: str, arguments: Any) -> str:
    """A requested call as the rendered prompt shows it: ``tool_call <name>(<arguments>)``,
    string arguments as they are, others as JSON (``messages._body`` and this module)."""
    return f"tool_call {name}({arguments if isinstance(arguments, str) else dumps(arguments)})"


_DEEP = 2000
"""A raw value shorter than this is less than 1 000 levels deep (orjson's limit is 1 024
for the whole text, whose list, message, parts and part add 4): checked only when longer."""


class _Part(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    type: str = ""
    content: str | UnsetType = UNSET
    text: str | UnsetType = UNSET
    id: str | UnsetType = UNSET
    name: str | UnsetType = UNSET
    arguments: msgspec.Raw | UnsetType = UNSET
    response: msgspec.Raw | UnsetType = UNSET


class _Message(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    parts: list[_Part]
    role: str = ""


_DECODE = msgspec.json.Decoder(list[_Message]).decode


class _Declined(Exception):
    """The text is not of the shape read here."""


def _value(raw: msgspec.Raw | UnsetType) -> Any:
    """A raw member as orjson reads it (None when absent, as ``dict.get`` gives)."""
    if raw is UNSET:
        return None
    view = memoryview(raw)
    if len(view) >= _DEEP and bytes(view).count(b"[") + bytes(view).count(b"{") >= 1000:
        raise _Declined
    try:
        return orjson.loads(view)
    except Exception:  # orjson refuses it: the old path reads the whole text its way
        raise _Declined from None


def _message(
    m: _Message, pieces: list[str], calls: list[tuple[str, Any, str | None]], results: list[Any]
) -> int:
    """``messages._walk`` of one message (its parts: no other key is here); returns the
    number of requested calls without a name."""
    unnamed = 0
    for p in m.parts:
        kind = p.type
        if kind == "tool_call":
            name = p.name
            if name.__class__ is str and name:
                cid = p.id
                calls.append((name, _value(p.arguments), None if cid is UNSET else cid))
            else:
                unnamed += 1
        elif kind == "tool_call_response":
            text = as_text(_value(p.response)) or ""
            pieces.append(text)
            if p.id is not UNSET:
                results.append((p.id, text))
        else:
            t = p.content
            if t is UNSET:
                t = p.text
            if t is not UNSET:
                pieces.append(t)
    return unnamed


def _decoded(v: str) -> list[_Message] | None:
    try:
        return _DECODE(v)
    except Exception:  # malformed, another shape, a lone surrogate, anything unforeseen
        return None


def input_lines(v: str) -> tuple[str, list[str], dict[str, str]] | None:
    """``messages._render`` of GenAI input messages text: the prompt, the system texts and
    the tool results by call id (the first wins); None when the text is not of the shape."""
    msgs = _decoded(v)
    if msgs is None:
        return None
    lines: list[str] = []
    system: list[str] = []
    results: list[tuple[str, str]] = []
    try:
        for m in msgs:
            pieces: list[str] = []
            calls: list[tuple[str, Any, str | None]] = []
            _message(m, pieces, calls, results)
            if calls:
                pieces.extend(call_line(n, a) for n, a, _ in calls)
            add_line(m.role, pieces[0] if len(pieces) == 1 else "\n".join(pieces), lines, system)
    except _Declined:
        return None
    return "\n".join(lines), system, first_by_id(results)


def add_line(role: str, text: str, lines: list[str], system: list[str]) -> None:
    """A message's prompt line (``<role>: <text>``, the text alone without a role) into
    ``lines``, its text into ``system`` too for a system role (both message walks)."""
    if role:
        lines.append(f"{role}: {text}")
        if role in SYSTEM_ROLES:
            system.append(text)
    else:
        lines.append(text)


def first_by_id(results: list[tuple[str, str]]) -> dict[str, str]:
    """Tool results by call id, the first one of an id winning (both message walks)."""
    found: dict[str, str] = {}
    for cid, text in results:
        found.setdefault(cid, text)
    return found


def output_fields(v: str) -> tuple[str | None, str | None, str | None] | None:
    """``messages.output_fields`` of GenAI output messages text; None when the text is not
    of the shape."""
    msgs = _decoded(v)
    if msgs is None:
        return None
    pieces: list[str] = []
    calls: list[tuple[str, Any, str | None]] = []
    unread: list[Any] = []
    unnamed = 0
    try:
        for m in msgs:
            unnamed += _message(m, pieces, calls, unread)
    except _Declined:
        return None
    return output_of(pieces, calls, unnamed > 0)


def output_of(
    pieces: list[str], calls: Sequence[tuple[str, Any, str | None]], unnamed: bool
) -> tuple[str | None, str | None, str | None]:
    """(output text, requested tool calls JSON, "1" when a call had no name) of the walked
    output messages (this module's and ``messages._output_fields``' walks)."""
    text = pieces[0] if len(pieces) == 1 else "\n".join(pieces)
    if not calls:
        return text, None, "1" if unnamed else None
    req = []  # a loop, not a comprehension: no function object per call (Python 3.11)
    for name, args, cid in calls:
        req.append([name, args if args.__class__ is dict else as_args(args), cid])
    return text, dumps(req), "1" if unnamed else None
