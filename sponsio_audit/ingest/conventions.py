"""Span → facts: what one span says under each convention of CONVENTIONS.md ("Span → event").

``span_facts`` looks at one span's attributes only; everything that needs the
span tree (inherited agent, delegation, ordering, inferred tool calls, naming a
bare tool argument after the requesting call) is done per trace in
``trace_events``. Rows are tried in the table's order and the first that
applies wins, **per field**: OTel GenAI (current, then deprecated), OpenLLMetry,
OpenInference, Sponsio verdict spans; a field the winning row did not record is
taken from the next row of the same role that did (an ``execute_tool`` span
without ``gen_ai.tool.call.arguments`` takes its args from ``input.value``).

What real instrumentations emit (CONVENTIONS.md, measured): a LangChain
``ToolMessage`` result (serialised ``{"type": "tool", "data": {...}}``, or
``{"lc": 1, ..., "kwargs": {...}}``, possibly under ``{"output": …}``) is its
``content``; an OpenLLMetry LangChain callback payload (``input_str``,
``inputs``, …) gives ``inputs`` as the args; an OpenInference TOOL span's bare
``input.value`` (one-parameter tool) is named by a one-property
``tool.parameters`` schema, else kept as ``bare`` for ``trace_events``, and
args are missing, never ``{"input": …}``.

Facts are a plain tuple in ``FACT_FIELDS`` order (cheap to build on the hot path).
"""

from __future__ import annotations

from typing import Any

from sponsio_audit.ingest import messages as m
from sponsio_audit.ingest.payloads import (
    callback_args,
    finish,
    openinference_args,
    tool_args,
    tool_result,
)
from sponsio_audit.ingest.values import as_args, as_text, dumps, loads_maybe

FACT_FIELDS = (
    "role",  # tool | llm | agent | turn | check | enforce | violation | None
    "convention",  # gen_ai | gen_ai_deprecated | openllmetry | openinference | sponsio
    "agent",  # agent name recorded on the span itself
    "agent_scope",  # the span opens an agent scope (invoke_agent, agent kinds, agent_turn)
    "tool",
    "args",  # compact JSON text of the args object, None when not recorded
    "content",
    "prompt",
    "system_prompt",
    "tokens_in",
    "tokens_out",
    "tokens_total",
    "conversation",
    "requested",  # JSON [[name, args-object-or-null], …] of LLM-requested tool calls
    "contract_id",
    "result",
    "message",
    "event_type",
    "call_id",  # tool call id of a tool span (to match the requesting LLM call)
    "bare",  # JSON of a bare, unnamed tool argument value (args then None)
    "wants_tools",  # "1" the LLM response says it called tools, "0" it did not, None: unrecorded
    "results",  # JSON {call id: result text} of tool results in the LLM input
)

LLM_OPS = frozenset({"chat", "generate_content", "text_completion"})
_NONE = (None,) * len(FACT_FIELDS)
_FILL_FROM = FACT_FIELDS.index("agent")
_EXTRA = (None,) * 4


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        return None


def _total(tin: int | None, tout: int | None, total: int | None) -> int | None:
    """Recorded total, else input + output when both were recorded (derived, documented)."""
    if total is not None:
        return total
    if tin is not None and tout is not None:
        return tin + tout
    return None


def _args_text(v: Any) -> str | None:
    a = as_args(v)
    return None if a is None else dumps(a)


def _requested(calls: list[m.Call]) -> str | None:
    if not calls:
        return None
    return dumps([[c.name, as_args(c.arguments), c.id] for c in calls])


def _conversation(attrs: dict[str, Any]) -> str | None:
    c = attrs.get("gen_ai.conversation.id")
    if c is None:
        c = attrs.get("session.id")
    if c is None:
        c = attrs.get("sponsio.conversation_id")
    return None if c is None else as_text(c)


def _name_after(name: str, prefix: str) -> str | None:
    return name[len(prefix) :].strip() or None if name.startswith(prefix) else None


def _tool(
    conv: str,
    agent: Any,
    tool: Any,
    args: str | None,
    result: Any,
    c: Any,
    call_id: Any = None,
    bare: str | None = None,
) -> tuple:
    content, rid = tool_result(result)
    cid = as_text(call_id) if call_id is not None else rid
    return (  # FACT_FIELDS order
        "tool", conv, as_text(agent), False, as_text(tool), args, content, None, None,
        None, None, None, c, None, None, None, None, None, cid, bare, None, None,
    )  # fmt: skip


def _llm(
    conv: str,
    agent: Any,
    inp: list[m.Msg] | None,
    instructions: Any,
    out: list[m.Msg] | None,
    tin: Any,
    tout: Any,
    total: Any,
    c: Any,
    wants: str | None = None,
) -> tuple:
    ti, to = _int(tin), _int(tout)
    prompt = system = results = None
    if inp is not None:
        prompt, system, res = m.input_facts(inp, instructions)
        results = dumps(res) if res else None
    elif instructions is not None:
        system = m.system_text([], instructions)
    content = requested = None
    if out is not None:
        content, calls, unnamed = m.output_facts(out)
        requested = _requested(calls)
        if unnamed:
            wants = "1"
    return (  # FACT_FIELDS order
        "llm", conv, as_text(agent), False, None, None, content, prompt, system, ti, to,
        _total(ti, to, _int(total)), c, requested, None, None, None, None, None, None,
        wants, results,
    )  # fmt: skip


def _agent(conv: str, name: Any, c: Any) -> tuple:
    return (  # FACT_FIELDS order
        "agent", conv, as_text(name), True, None, None, None, None, None, None, None, None,
        c, None, None, None, None, None, *_EXTRA,
    )  # fmt: skip


def _genai(name: str, attrs: dict[str, Any], op: Any, c: str | None) -> tuple | None:
    agent = attrs.get("gen_ai.agent.name")
    if op == "execute_tool":
        tool = attrs.get("gen_ai.tool.name") or _name_after(name, "execute_tool")
        cid = attrs.get("gen_ai.tool.call.id")
        args, cb_id = tool_args(attrs.get("gen_ai.tool.call.arguments"))
        if cid is None:
            cid = cb_id
        return _tool("gen_ai", agent, tool, args, attrs.get("gen_ai.tool.call.result"), c, cid)
    if op == "invoke_agent":
        return _agent("gen_ai", agent or _name_after(name, "invoke_agent"), c)
    current = "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs
    if op in LLM_OPS or current:
        inp = out = None
        conv = "gen_ai"
        if current or "gen_ai.system_instructions" in attrs:
            if "gen_ai.input.messages" in attrs:
                inp = m.norm_messages(attrs["gen_ai.input.messages"])
            if "gen_ai.output.messages" in attrs:
                out = m.norm_messages(attrs["gen_ai.output.messages"])
        elif "gen_ai.prompt" in attrs or "gen_ai.completion" in attrs:
            conv = "gen_ai_deprecated"
            if "gen_ai.prompt" in attrs:
                inp = m.norm_messages(attrs["gen_ai.prompt"])
            if "gen_ai.completion" in attrs:
                out = m.norm_messages(attrs["gen_ai.completion"])
        elif "gen_ai.prompt.0.content" in attrs or "gen_ai.prompt.0.role" in attrs:
            return _openllmetry_llm(attrs, agent, c)
        tin = attrs.get("gen_ai.usage.input_tokens", attrs.get("gen_ai.usage.prompt_tokens"))
        tout = attrs.get("gen_ai.usage.output_tokens", attrs.get("gen_ai.usage.completion_tokens"))
        total = attrs.get("gen_ai.usage.total_tokens", attrs.get("llm.usage.total_tokens"))
        return _llm(
            conv,
            agent,
            inp,
            attrs.get("gen_ai.system_instructions"),
            out,
            tin,
            tout,
            total,
            c,
            finish(attrs),
        )
    if op is None and ("gen_ai.prompt" in attrs or "gen_ai.completion" in attrs):
        return _genai(name, attrs, "chat", c)
    return None


def _openllmetry_llm(attrs: dict[str, Any], agent: Any, c: str | None) -> tuple:
    has_in = any(k.startswith("gen_ai.prompt.") for k in attrs)
    has_out = any(k.startswith("gen_ai.completion.") for k in attrs)
    inp = m.openllmetry_messages(attrs, "gen_ai.prompt.") if has_in else None
    out = m.openllmetry_messages(attrs, "gen_ai.completion.") if has_out else None
    tin = attrs.get("gen_ai.usage.prompt_tokens", attrs.get("gen_ai.usage.input_tokens"))
    tout = attrs.get("gen_ai.usage.completion_tokens", attrs.get("gen_ai.usage.output_tokens"))
    total = attrs.get("llm.usage.total_tokens")
    return _llm("openllmetry", agent, inp, None, out, tin, tout, total, c, finish(attrs))


def _traceloop_args(v: Any) -> str | None:
    """``{"args": [...], "kwargs": {...}}`` → kwargs, with positional args under "args"."""
    if isinstance(v, str):
        v = loads_maybe(v)
    if isinstance(v, dict) and set(v) <= {"args", "kwargs"} and v:
        pos = v.get("args") or []
        k = v.get("kwargs")
        kw: dict[str, Any] = k if isinstance(k, dict) else {}
        return dumps({"args": pos, **kw} if pos else dict(kw))
    return _args_text(v)


def _unwrap_output(v: Any) -> str | None:
    """A serialised result: a JSON string literal becomes its text; other text kept as is."""
    if isinstance(v, str):
        p = loads_maybe(v)
        return p if isinstance(p, str) else v
    return as_text(v)


def _traceloop(name: str, attrs: dict[str, Any], kind: Any, c: str | None) -> tuple | None:
    agent = attrs.get("gen_ai.agent.name")
    ent = attrs.get("traceloop.entity.name") or name
    if kind == "tool":
        raw = attrs.get("traceloop.entity.input")
        cb = callback_args(raw)  # LangChain's callback payload: the args are its inputs
        args, cid = cb if cb is not None else (_traceloop_args(raw), None)
        out = _unwrap_output(attrs.get("traceloop.entity.output"))
        return _tool("openllmetry", agent, ent, args, out, c, cid)
    if kind == "agent":
        return _agent("openllmetry", agent or ent, c)
    return None


def _openinference(name: str, attrs: dict[str, Any], kind: Any, c: str | None) -> tuple | None:
    agent = attrs.get("gen_ai.agent.name")
    if kind == "TOOL":
        tool = attrs.get("tool.name") or name
        args, bare = openinference_args(attrs)
        return _tool("openinference", agent, tool, args, attrs.get("output.value"), c, None, bare)
    if kind == "LLM":
        has_in = any(k.startswith("llm.input_messages.") for k in attrs)
        has_out = any(k.startswith("llm.output_messages.") for k in attrs)
        inp = m.openinference_messages(attrs, "llm.input_messages.") if has_in else None
        out = m.openinference_messages(attrs, "llm.output_messages.") if has_out else None
        return _llm(
            "openinference",
            agent,
            inp,
            None,
            out,
            attrs.get("llm.token_count.prompt"),
            attrs.get("llm.token_count.completion"),
            attrs.get("llm.token_count.total"),
            c,
            finish(attrs),
        )
    if kind == "AGENT":
        return _agent("openinference", agent or attrs.get("agent.name") or name, c)
    return None


def _sponsio(name: str, attrs: dict[str, Any], c: str | None) -> tuple | None:
    agent = as_text(attrs.get("sponsio.agent_id"))
    if name == "sponsio.agent_turn":
        et = as_text(attrs.get("sponsio.event.type"))
        if attrs.get("sponsio.outcome.blocked") is True and et in (None, "tool_call"):
            et = "tool_attempt"  # the guard stopped it: it never ran (SEMANTICS §4.2)
        return (  # FACT_FIELDS order
            "turn", "sponsio", agent, True, as_text(attrs.get("sponsio.event.tool")),
            _args_text(attrs.get("sponsio.event.tool_args")), None, None, None, None, None,
            None, c, None, None, None, None, et, *_EXTRA,
        )  # fmt: skip
    role = {
        "sponsio.contract_check": "check",
        "sponsio.enforcement": "enforce",
        "sponsio.violation": "violation",
    }.get(name)
    if role is None:
        return None
    cid = as_text(attrs.get("sponsio.contract.id"))
    result = as_text(attrs.get("sponsio.enforcement.action"))
    msg = as_text(
        attrs.get("sponsio.violation.evidence")
        if role == "violation"
        else attrs.get("sponsio.contract.label")
    )
    return (  # FACT_FIELDS order
        role, "sponsio", agent, False, None, None, None, None, None, None, None, None, c,
        None, cid, result, msg, None, *_EXTRA,
    )  # fmt: skip


def _rows(name: str, attrs: dict[str, Any], c: str | None) -> list[tuple]:
    """The facts of every row of the table that applies to the span, in table order."""
    out: list[tuple] = []
    op = attrs.get("gen_ai.operation.name")
    if op is not None and not isinstance(op, str):  # an array/map is no operation we know
        op = as_text(op)
    if op is not None or "gen_ai.prompt" in attrs or "gen_ai.completion" in attrs:
        f = _genai(name, attrs, op, c)
        if f is not None:
            out.append(f)
    kind = attrs.get("traceloop.span.kind")
    if kind is not None:
        f = _traceloop(name, attrs, kind, c)
        if f is not None:
            out.append(f)
    if "gen_ai.prompt.0.content" in attrs or "gen_ai.prompt.0.role" in attrs:
        out.append(_openllmetry_llm(attrs, attrs.get("gen_ai.agent.name"), c))
    kind = attrs.get("openinference.span.kind")
    if kind is not None:
        f = _openinference(name, attrs, kind, c)
        if f is not None:
            out.append(f)
    if name.startswith("sponsio."):
        f = _sponsio(name, attrs, c)
        if f is not None:
            out.append(f)
    return out


def fill(first: tuple, other: tuple) -> tuple:
    """``first`` with its unrecorded (None) fields taken from ``other`` (same role only).

    A bare argument value is dropped once args are known.
    """
    if other[0] != first[0] or None not in first[_FILL_FROM:]:
        return first
    out = first[:_FILL_FROM] + tuple(
        b if a is None else a for a, b in zip(first[_FILL_FROM:], other[_FILL_FROM:], strict=True)
    )
    if out[_ARGS] is not None and out[_BARE] is not None:
        out = (*out[:_BARE], None, *out[_BARE + 1 :])
    return out


_ARGS = FACT_FIELDS.index("args")
_BARE = FACT_FIELDS.index("bare")


def span_facts(name: str, attrs: dict[str, Any]) -> tuple:
    """The facts tuple (``FACT_FIELDS``) of one span from its name and attributes."""
    c = _conversation(attrs)
    rows = _rows(name, attrs, c)
    if rows:
        f = rows[0]
        for other in rows[1:]:
            f = fill(f, other)
        return f
    agent = attrs.get("gen_ai.agent.name")
    if agent is None and c is None:
        return _NONE
    return (None, None, as_text(agent), False) + (None,) * 8 + (c,) + (None,) * 9
