"""LLM messages of every convention → prompt text, system prompt, output text, tool calls.

Every message shape is read by one walk (``_walk``):

- OpenAI chat: ``{role, content: str | [{type: text, text}], tool_calls: [{id,
  function: {name, arguments}}], tool_call_id}``;
- OTel GenAI: ``{role, parts: [{type: text, content} | {type: tool_call, id, name,
  arguments} | {type: tool_call_response, id, response}]}``;
- flattened OpenInference ``llm.input_messages.N.message.…`` and OpenLLMetry
  ``gen_ai.prompt.N.…`` attributes (made message dicts first: ``flat_messages``);
- a bare string, or ``{"text": …}`` / ``{"content": …}`` objects (deprecated completions).

The conventions read a recorded messages value straight into facts
(``input_fields``, ``output_fields``: the string parsed once, no message object
built; GenAI ``{role, parts}`` text of the usual shape by typed structs first,
``typed_messages``); ``to_msg`` gives the same walk as a ``Msg`` for the transcript reader.

Rendering (documented choice, used by ``prompt_contains`` / ``context_length``):
the prompt is one line group per message, ``"<role>: <text>"`` joined by ``"\\n"``,
where a message's text is its pieces joined by ``"\\n"``; a requested tool call
renders as ``tool_call <name>(<arguments JSON>)`` and a tool result as its text.
The system prompt is the text of ``system``/``developer`` messages (and GenAI
``gen_ai.system_instructions``) joined by ``"\\n"``. LLM output text is the text
pieces of the output messages only (tool calls go to ``calls``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from sponsio_audit.ingest import typed_messages
from sponsio_audit.ingest.typed_messages import (
    SYSTEM_ROLES,
    add_line,
    call_line,
    first_by_id,
    output_of,
)
from sponsio_audit.ingest.values import as_text, dumps, loads_maybe


class Call(NamedTuple):
    """A tool call requested by an LLM: name, recorded arguments (raw), call id."""

    name: str
    arguments: Any
    id: str | None


class Msg(NamedTuple):
    """One normalised message: role, text pieces (no tool calls), tool results and calls.

    ``results`` pairs a tool call id with its result text (an OpenAI ``role: tool``
    message with ``tool_call_id``, GenAI ``tool_call_response`` parts); ``unnamed``
    counts requested tool calls whose name was not recorded (SEMANTICS.md §5).
    """

    role: str
    pieces: tuple[str, ...]
    calls: tuple[Call, ...]
    results: tuple[tuple[str, str], ...] = ()
    unnamed: int = 0

    def text(self) -> str:
        """Prompt rendering of the message body (pieces, then its tool calls)."""
        return _body(self.pieces, self.calls)


# tuple.__new__: a Call/Msg without NamedTuple's Python-level __new__ (hot path: every message)
_new = tuple.__new__


def _body(pieces: Any, calls: Any) -> str:
    """A message's text: its pieces, then ``tool_call <name>(<arguments>)`` per call."""
    if not calls:
        return "\n".join(pieces)
    parts = list(pieces)
    parts.extend(call_line(c.name, c.arguments) for c in calls)
    return "\n".join(parts)


def _content_pieces(content: Any) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        out: list[str] = []
        for p in content:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, dict):
                t = p.get("text", p.get("content"))
                if t is not None:
                    out.append(as_text(t) or "")
        return out
    return [as_text(content) or ""]


def _calls(tool_calls: Any, calls: list[Call], unnamed: list[int]) -> None:
    """Add OpenAI ``tool_calls`` to ``calls``, a 1 to ``unnamed`` per entry without a name."""
    if not isinstance(tool_calls, list):
        return
    for tc in tool_calls:
        if not isinstance(tc, dict):
            continue
        f = tc.get("function")
        fn: dict[str, Any] = f if isinstance(f, dict) else tc
        _add_call(calls, unnamed, fn.get("name"), fn, tc.get("id"))


def _add_call(
    calls: list[Call], unnamed: list[int], name: Any, holder: dict[str, Any], cid: Any
) -> None:
    """A requested call with a string name (its ``arguments`` from ``holder``) to ``calls``,
    or a 1 to ``unnamed`` when it has none: the one rule of GenAI parts and OpenAI calls."""
    if isinstance(name, str) and name:
        calls.append(
            _new(Call, (name, holder.get("arguments"), cid if isinstance(cid, str) else None))
        )
    else:
        unnamed.append(1)


def _walk(
    m: Any,
    pieces: list[str],
    calls: list[Call],
    results: list[tuple[str, str]],
    unnamed: list[int],
) -> str | None:
    """Add one message's text pieces, tool calls and tool results to the lists (and a 1
    to ``unnamed`` per requested call without a name); returns its role ("" when not
    recorded), None if ``m`` is not a message.

    Pieces come from GenAI ``parts``, then ``content``, then (only when neither
    ``parts`` is a list nor ``content`` is present) ``text``; calls from the
    ``tool_call`` parts, then OpenAI ``tool_calls``. In ``parts``, non-objects are
    skipped; a ``tool_call`` part with a string name is a call, a
    ``tool_call_response`` part its response as text (and a result); any other part
    gives its ``content``, else its ``text``, when recorded. A ``role: tool`` message
    without result parts is the result of its ``tool_call_id`` (else ``id``): the
    text of its pieces, so ``pieces`` must hold only this message's.
    """
    if m.__class__ is not dict:
        if isinstance(m, str):
            pieces.append(m)
            return "user"
        if not isinstance(m, dict):
            return None
    role = m.get("role")
    if role.__class__ is not str:
        role = role if isinstance(role, str) else ""
    seen = len(results) if role == "tool" else 0
    parts = m.get("parts")
    listed = False
    if parts.__class__ is list or isinstance(parts, list):
        listed = True
        for p in parts:
            if p.__class__ is not dict and not isinstance(p, dict):
                continue
            kind = p.get("type")
            if kind == "tool_call":
                name = p.get("name")
                if name.__class__ is str and name:  # ``_add_call``, inline
                    cid = p.get("id")
                    cid = cid if isinstance(cid, str) else None
                    calls.append(_new(Call, (name, p.get("arguments"), cid)))
                else:
                    _add_call(calls, unnamed, name, p, p.get("id"))
            elif kind == "tool_call_response":
                text = as_text(p.get("response")) or ""
                pieces.append(text)
                rid = p.get("id")
                if isinstance(rid, str):
                    results.append((rid, text))
            else:
                t = p.get("content")
                if t is None:
                    t = p.get("text")
                if t.__class__ is str:  # the usual text part, inline
                    pieces.append(t)
                elif t is not None:
                    pieces.append(as_text(t) or "")
        if len(m) == 2 and "role" in m:  # just role and parts (GenAI): nothing more to read
            return role
    content = m.get("content")
    if content.__class__ is str:  # the usual OpenAI form, inline
        pieces.append(content)
    elif content is not None:
        pieces.extend(_content_pieces(content))
    elif not listed and "text" in m and "content" not in m:
        pieces.extend(_content_pieces(m["text"]))
    tool_calls = m.get("tool_calls")
    if tool_calls is not None:
        _calls(tool_calls, calls, unnamed)
    if role == "tool" and len(results) == seen:
        cid = m.get("tool_call_id", m.get("id"))
        if isinstance(cid, str):
            results.append((cid, "\n".join(pieces)))
    return role


def to_msg(m: Any) -> Msg | None:
    """One message dict of any supported shape as a ``Msg`` (None if it is not a message)."""
    pieces: list[str] = []
    calls: list[Call] = []
    results: list[tuple[str, str]] = []
    unnamed: list[int] = []
    role = _walk(m, pieces, calls, results, unnamed)
    if role is None:
        return None
    return _new(Msg, (role, tuple(pieces), tuple(calls), tuple(results), len(unnamed)))


def _items(v: Any) -> list[Any] | str | None:
    """The messages of a recorded value (JSON text, list, object): a list of message
    items, the text of the one role-less message that a plain value is, or None for a
    null (JSON ``null`` text or an empty value): nothing recorded, not an empty list."""
    if v.__class__ is list:
        return v
    if v.__class__ is str:
        try:  # valid JSON is what loads_maybe would parse (orjson first, as values.parse)
            v = orjson.loads(v)
        except orjson.JSONDecodeError:
            v = loads_maybe(v)
        if v.__class__ is list:  # the usual case
            return v
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        inner = v.get("messages")
        v = inner if isinstance(inner, list) else [v]
    if not isinstance(v, list):
        return (as_text(v) or "") if v is not None else None
    return v


def _render(items: list[Any] | str, lines: list[str], system: list[str]) -> dict[str, str]:
    """Add the prompt line and system text of each message to ``lines`` and ``system``;
    returns the tool results by call id (first one wins)."""
    if isinstance(items, str):
        lines.append(items)
        return {}
    results: list[tuple[str, str]] = []
    unnamed: list[int] = []
    calls: list[Call] = []  # a message's calls; a new list only after a message had some
    for item in items:
        pieces: list[str] = []
        role = _walk(item, pieces, calls, results, unnamed)
        if role is None:  # not a message: _walk added nothing
            continue
        if calls:
            t = _body(pieces, calls)
            calls = []
        else:
            t = pieces[0] if len(pieces) == 1 else "\n".join(pieces)
        add_line(role, t, lines, system)
    return first_by_id(results) if results else {}


def input_fields(v: Any, instructions: Any = None) -> tuple[str | None, ...]:
    """(prompt, system prompt, tool results JSON) of a recorded input messages value,
    with GenAI system instructions (``None``: not recorded) added to the system prompt.

    A null value records no input: prompt and system prompt are None (missing,
    SEMANTICS.md §5), so content atoms are unknown there, not false; the system
    prompt then comes from the instructions alone."""
    fast = typed_messages.input_lines(v) if v.__class__ is str else None
    if fast is None:
        return _input_fields(v, instructions)
    prompt, system, results = fast
    if instructions is not None:
        _instructions(_items(instructions), system)
    return prompt, "\n".join(system), dumps(results) if results else None


def _input_fields(v: Any, instructions: Any) -> tuple[str | None, ...]:
    """``input_fields`` read from the parsed value (any shape: the orjson dicts walked)."""
    items = _items(v)
    if items is None:
        return (None, *system_fields(instructions), None)
    lines: list[str] = []
    system: list[str] = []
    results = _render(items, lines, system)
    if instructions is not None:
        _instructions(_items(instructions), system)
    return "\n".join(lines), "\n".join(system), dumps(results) if results else None


def system_fields(instructions: Any) -> tuple[str | None]:
    """(system prompt,) of GenAI system instructions (None when absent or null)."""
    items = _items(instructions) if instructions is not None else None
    if items is None:
        return (None,)
    system: list[str] = []
    _instructions(items, system)
    return ("\n".join(system),)


def _instructions(items: list[Any] | str | None, system: list[str]) -> None:
    """Add the text of each system-instructions message (role ignored) to ``system``."""
    if items is None:
        return
    if isinstance(items, str):
        system.append(items)
        return
    for item in items:
        msg = to_msg(item)
        if msg is not None:
            system.append(msg.text())


def output_fields(v: Any) -> tuple[str | None, str | None, str | None]:
    """(output text, requested tool calls JSON, "1" when a call had no name) of a
    recorded output messages value; tool results in the output are not read.
    A null value records no output: all three None (missing, not empty)."""
    if v.__class__ is str and (fast := typed_messages.output_fields(v)) is not None:
        return fast
    return _output_fields(v)


def _output_fields(v: Any) -> tuple[str | None, str | None, str | None]:
    """``output_fields`` read from the parsed value (any shape: the orjson dicts walked)."""
    items = _items(v)
    if items is None:
        return None, None, None
    if isinstance(items, str):
        return items, None, None
    pieces: list[str] = []
    calls: list[Call] = []
    unnamed: list[int] = []
    unread: list[tuple[str, str]] = []  # results of output messages are not read, so
    for item in items:  # pieces shared by the messages (a role: tool result's text is off)
        _walk(item, pieces, calls, unread, unnamed)
    return output_of(pieces, calls, bool(unnamed))


def prompt_and_system(msgs: list[Msg], instructions: Any = None) -> tuple[str, str]:
    """Prompt text and system text of ``Msg`` input messages (the transcript reader's)."""
    lines: list[str] = []
    system: list[str] = []
    for msg in msgs:
        t = msg.text()
        if msg.role:
            lines.append(f"{msg.role}: {t}")
            if msg.role in SYSTEM_ROLES:
                system.append(t)
        else:
            lines.append(t)
    if instructions is not None:
        _instructions(_items(instructions), system)
    return "\n".join(lines), "\n".join(system)
