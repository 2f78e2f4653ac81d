"""LLM messages of every convention → prompt text, system prompt, output text, tool calls.

All message shapes are first brought to one form, ``Msg(role, pieces, calls)``:

- OpenAI chat: ``{role, content: str | [{type: text, text}], tool_calls: [{id,
  function: {name, arguments}}], tool_call_id}``;
- OTel GenAI: ``{role, parts: [{type: text, content} | {type: tool_call, id, name,
  arguments} | {type: tool_call_response, id, response}]}``;
- flattened OpenInference ``llm.input_messages.N.message.…`` and OpenLLMetry
  ``gen_ai.prompt.N.…`` attributes (unflattened first);
- a bare string, or ``{"text": …}`` / ``{"content": …}`` objects (deprecated completions).

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

from sponsio_audit.ingest.values import as_text, dumps, loads_maybe

SYSTEM_ROLES = frozenset({"system", "developer"})


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
        if not self.calls:
            return "\n".join(self.pieces)
        parts = list(self.pieces)
        parts.extend(f"tool_call {c.name}({_arg_text(c.arguments)})" for c in self.calls)
        return "\n".join(parts)


_new = tuple.__new__


def _arg_text(a: Any) -> str:
    return a if isinstance(a, str) else dumps(a)


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


def _calls(tool_calls: Any) -> tuple[list[Call], int]:
    """OpenAI ``tool_calls`` as calls, and how many entries had no name."""
    out: list[Call] = []
    unnamed = 0
    if not isinstance(tool_calls, list):
        return out, unnamed
    for tc in tool_calls:
        if not isinstance(tc, dict):
            continue
        f = tc.get("function")
        fn: dict[str, Any] = f if isinstance(f, dict) else tc
        name = fn.get("name")
        if isinstance(name, str) and name:
            cid = tc.get("id")
            out.append(Call(name, fn.get("arguments"), cid if isinstance(cid, str) else None))
        else:
            unnamed += 1
    return out, unnamed


def to_msg(m: Any) -> Msg | None:
    """One message dict of any supported shape as a ``Msg`` (None if it is not a message).

    Pieces come from GenAI ``parts``, then ``content``, then (only when neither
    ``parts`` is a list nor ``content`` is present) ``text``; calls from the
    ``tool_call`` parts, then OpenAI ``tool_calls``.
    """
    if isinstance(m, str):
        return Msg("user", (m,), ())
    if not isinstance(m, dict):
        return None
    role = m.get("role")
    if not isinstance(role, str):
        role = ""
    parts = m.get("parts")
    pieces: list[str] = []
    calls: list[Call] = []
    results: list[tuple[str, str]] = []
    unnamed = 0
    if isinstance(parts, list):
        unnamed = _read_parts(parts, pieces, calls, results)
    content = m.get("content")
    if type(content) is str:  # the usual OpenAI form, inline
        pieces.append(content)
    elif content is not None:
        pieces.extend(_content_pieces(content))
    elif "text" in m and "content" not in m and not isinstance(parts, list):
        pieces.extend(_content_pieces(m["text"]))
    tool_calls = m.get("tool_calls")
    if tool_calls is not None:
        more, n = _calls(tool_calls)
        calls.extend(more)
        unnamed += n
    cid = m.get("tool_call_id", m.get("id") if role == "tool" else None)
    if role == "tool" and isinstance(cid, str) and not results:
        results.append((cid, "\n".join(pieces)))
    # tuple.__new__: a Msg without NamedTuple's Python-level __new__ (hot path: every message)
    return _new(Msg, (role, tuple(pieces), tuple(calls), tuple(results), unnamed))


def _read_parts(
    parts: list[Any], pieces: list[str], calls: list[Call], results: list[tuple[str, str]]
) -> int:
    """Add the text pieces, tool calls and tool results of GenAI message ``parts``
    (non-objects skipped); returns the number of tool-call parts without a name.

    A ``tool_call`` part with a string name is a call, a ``tool_call_response``
    part its response as text; any other part contributes its ``content``, else
    its ``text``, when recorded.
    """
    unnamed = 0
    for p in parts:
        if not isinstance(p, dict):
            continue
        kind = p.get("type")
        if kind == "tool_call":
            name = p.get("name")
            if isinstance(name, str) and name:
                cid = p.get("id")
                calls.append(Call(name, p.get("arguments"), cid if isinstance(cid, str) else None))
                continue
            unnamed += 1
            continue
        elif kind == "tool_call_response":
            text = as_text(p.get("response")) or ""
            pieces.append(text)
            rid = p.get("id")
            if isinstance(rid, str):
                results.append((rid, text))
            continue
        t = p.get("content")
        if t is None:
            t = p.get("text")
        if type(t) is str:  # the usual text part, inline
            pieces.append(t)
        elif t is not None:
            pieces.append(as_text(t) or "")
    return unnamed


def norm_messages(v: Any) -> list[Msg]:
    """A recorded messages value (JSON text, list, object or plain text) as ``Msg`` list."""
    if isinstance(v, str):
        v = loads_maybe(v)
        if isinstance(v, str):
            return [Msg("", (v,), ())]
    if isinstance(v, dict):
        inner = v.get("messages")
        v = inner if isinstance(inner, list) else [v]
    if not isinstance(v, list):
        return [Msg("", (as_text(v) or "",), ())] if v is not None else []
    out = []
    for m in v:
        msg = to_msg(m)
        if msg is not None:
            out.append(msg)
    return out


def prompt_text(msgs: list[Msg]) -> str:
    """The prompt rendering of input messages (module doc)."""
    return prompt_and_system(msgs)[0]


def system_text(msgs: list[Msg], instructions: Any = None) -> str:
    """System prompt: system-role messages plus GenAI system instructions ("" when none)."""
    return prompt_and_system(msgs, instructions)[1]


def prompt_and_system(msgs: list[Msg], instructions: Any = None) -> tuple[str, str]:
    """``prompt_text`` and ``system_text`` together, each message's text rendered once."""
    prompt, system, _ = input_facts(msgs, instructions)
    return prompt, system


def input_facts(msgs: list[Msg], instructions: Any = None) -> tuple[str, str, dict[str, str]]:
    """Prompt text, system text and ``tool_results`` of input messages, in one pass."""
    lines: list[str] = []
    system: list[str] = []
    results: dict[str, str] = {}
    for m in msgs:
        t = m.text()
        role = m.role
        if role:
            lines.append(f"{role}: {t}")
            if role in SYSTEM_ROLES:
                system.append(t)
        else:
            lines.append(t)
        for cid, text in m.results:
            results.setdefault(cid, text)
    if instructions is not None:
        system.extend(m.text() for m in norm_messages(instructions))
    return "\n".join(lines), "\n".join(system), results


def output_facts(msgs: list[Msg]) -> tuple[str, list[Call], int]:
    """``output_text``, ``output_calls`` and ``unnamed_calls`` of output messages, in one pass."""
    if len(msgs) == 1:
        (m,) = msgs
        return "\n".join(m.pieces), list(m.calls), m.unnamed
    pieces: list[str] = []
    calls: list[Call] = []
    unnamed = 0
    for m in msgs:
        pieces.extend(m.pieces)
        calls.extend(m.calls)
        unnamed += m.unnamed
    return "\n".join(pieces), calls, unnamed


def output_text(msgs: list[Msg]) -> str:
    """The LLM output text: text pieces of the output messages joined by newlines."""
    return output_facts(msgs)[0]


def output_calls(msgs: list[Msg]) -> list[Call]:
    """Tool calls requested in the output messages, in order."""
    return output_facts(msgs)[1]


def unnamed_calls(msgs: list[Msg]) -> int:
    """Requested tool calls whose name was not recorded."""
    return output_facts(msgs)[2]


def tool_results(msgs: list[Msg]) -> dict[str, str]:
    """Tool results of the input messages by tool call id (first one wins)."""
    return input_facts(msgs)[2]


def unflatten(attrs: dict[str, Any], prefix: str) -> list[Any]:
    """Indexed attributes ``<prefix>N.a.b`` as a list of nested dicts, ordered by N.

    Numeric path segments become dict keys; ``_listify`` turns them into lists.
    """
    root: dict[str, Any] = {}
    n = len(prefix)
    for k, v in attrs.items():
        if not k.startswith(prefix):
            continue
        node = root
        segs = k[n:].split(".")
        for s in segs[:-1]:
            nxt = node.get(s)
            if not isinstance(nxt, dict):
                nxt = {}
                node[s] = nxt
            node = nxt
        node[segs[-1]] = v
    out = _listify(root)
    return out if isinstance(out, list) else []


def _listify(node: Any, depth: int = 0) -> Any:
    if not isinstance(node, dict) or depth > 16:
        return node
    if node and all(k.isdigit() for k in node):
        return [_listify(node[k], depth + 1) for k in sorted(node, key=int)]
    return {k: _listify(v, depth + 1) for k, v in node.items()}


def openinference_messages(attrs: dict[str, Any], prefix: str) -> list[Msg]:
    """``llm.input_messages.N.message.{role,content,contents…,tool_calls…}`` as messages."""
    out = []
    for item in unflatten(attrs, prefix):
        m = item.get("message") if isinstance(item, dict) else None
        if not isinstance(m, dict):
            continue
        contents = m.get("contents")
        content: Any = m.get("content")
        if content is None and isinstance(contents, list):
            content = [c.get("message_content") for c in contents if isinstance(c, dict)]
        tcs = m.get("tool_calls")
        calls = []
        if isinstance(tcs, list):
            for tc in tcs:
                t = tc.get("tool_call") if isinstance(tc, dict) else None
                if isinstance(t, dict):
                    calls.append({"id": t.get("id"), "function": t.get("function") or {}})
        msg = to_msg(
            {
                "role": m.get("role"),
                "content": content,
                "tool_calls": calls,
                "tool_call_id": m.get("tool_call_id"),
            }
        )
        if msg is not None:
            out.append(msg)
    return out


def openllmetry_messages(attrs: dict[str, Any], prefix: str) -> list[Msg]:
    """``gen_ai.prompt.N.{role,content,tool_calls.K.{name,arguments}}`` as messages."""
    out = []
    for item in unflatten(attrs, prefix):
        if isinstance(item, dict):
            content = item.get("content")
            if isinstance(content, str):
                parsed = loads_maybe(content)
                content = parsed if isinstance(parsed, list) else content
            msg = to_msg({**item, "content": content})
            if msg is not None:
                out.append(msg)
    return out
