"""What real instrumentations put inside attribute values (CONVENTIONS.md, measured).

- a LangChain ``ToolMessage`` result, serialised as ``{"type": "tool", "data":
  {...}}`` (OpenInference) or ``{"lc": 1, "type": "constructor", "id": [...,
  "ToolMessage"], "kwargs": {...}}`` (OpenLLMetry, under ``{"output": …,
  "kwargs": …}``), is its ``content``, and carries the ``tool_call_id``;
- OpenLLMetry LangChain's tool arguments are the callback payload
  ``{"input_str", "tags", "metadata", "inputs", "kwargs"}``: the args are ``inputs``;
- an OpenInference TOOL span's ``input.value`` is the JSON args, or for a
  one-parameter tool the bare value (named by a one-property ``tool.parameters``
  schema when there is one);
- finish reasons saying the model called tools, in every convention's key.
"""

from __future__ import annotations

from typing import Any

import orjson

from sponsio_audit.ingest import messages as m
from sponsio_audit.ingest.values import as_args, as_text, dumps, loads_maybe

TOOL_FINISH = frozenset({"tool_calls", "tool_call", "function_call", "tool_use"})
"""Finish reasons that say the model asked for tools."""


def finish(reasons: Any, reason: Any = None, first_choice: Any = None) -> tuple[str | None]:
    """(wants_tools,) from the recorded finish reasons (GenAI ``finish_reasons``,
    OpenInference ``llm.finish_reason``, OpenLLMetry's first choice's): "1" the model
    called tools, "0" it did not, None when no finish reason was recorded."""
    seen = False
    for v in (reasons, reason):
        if v is None:
            continue
        if isinstance(v, str):
            v = loads_maybe(v)
        vals = v if isinstance(v, list) else [v]
        for x in vals:
            if isinstance(x, str):
                if x in TOOL_FINISH:
                    return ("1",)
                seen = True
    if isinstance(first_choice, str):
        return ("1" if first_choice in TOOL_FINISH else "0",)
    return ("0" if seen else None,)


def tool_message(v: Any) -> tuple[str, str | None] | None:
    """(content, tool_call_id) of a serialised LangChain ``ToolMessage``, else None."""
    if isinstance(v, str):
        if v[:1] != "{" or ('"content"' not in v and "\\" not in v):
            return None  # no "content" key, even escaped: not a ToolMessage (not parsed)
        v = loads_maybe(v)
    if not isinstance(v, dict):
        return None
    if "output" in v and set(v) <= {"output", "kwargs"}:  # OpenLLMetry's callback result
        return tool_message(v["output"])
    data: Any = None
    if v.get("type") == "tool" and isinstance(v.get("data"), dict):
        data = v["data"]
    elif v.get("lc") == 1 and isinstance(v.get("id"), list) and v["id"][-1:] == ["ToolMessage"]:
        data = v.get("kwargs")
    if not isinstance(data, dict) or "content" not in data:
        return None
    cid = data.get("tool_call_id")
    content = data["content"]
    text = content if isinstance(content, str) else "\n".join(m._content_pieces(content))
    return text, cid if isinstance(cid, str) else None


def tool_result(v: Any) -> tuple[str | None, str | None]:
    """A tool span's result as text, and the call id when it is a ``ToolMessage``."""
    tm = tool_message(v)
    if tm is not None:
        return tm
    return as_text(v), None


def callback_args(v: Any) -> tuple[str | None, str | None] | None:
    """OpenLLMetry LangChain's callback payload → (args = ``inputs``, tool call id)."""
    if isinstance(v, str):
        if v[:1] != "{":
            return None
        v = loads_maybe(v)
    return _callback(v)


def _callback(v: Any) -> tuple[str | None, str | None] | None:
    if not isinstance(v, dict) or "input_str" not in v or "inputs" not in v:
        return None
    kw = v.get("kwargs")
    cid = kw.get("tool_call_id") if isinstance(kw, dict) else None
    inputs = v["inputs"]
    args = dumps(inputs) if isinstance(inputs, dict) else None
    return args, cid if isinstance(cid, str) else None


def tool_args(v: Any) -> tuple[str | None, str | None]:
    """(args, call id) of recorded tool arguments, the string parsed once: a LangChain
    callback payload gives ``callback_args``, anything else ``as_args`` as JSON text."""
    if v.__class__ is str:
        try:  # valid JSON is what loads_maybe would parse (orjson first, as values.parse)
            parsed = orjson.loads(v)
        except orjson.JSONDecodeError:
            parsed = loads_maybe(v)
        if parsed.__class__ is dict:
            if v[:1] == "{" and "input_str" in parsed and "inputs" in parsed:
                return _callback(parsed) or (None, None)
            return dumps(parsed), None
        if parsed is None:  # JSON null: no args recorded (``values.as_args``)
            return None, None
        return dumps(parsed if isinstance(parsed, dict) else {"input": parsed}), None
    cb = _callback(v)
    if cb is not None:
        return cb
    return args_text(v), None


def _one_param(schema: Any) -> str | None:
    """The parameter name of a one-property JSON schema (``tool.parameters``), else None."""
    if isinstance(schema, str):
        schema = loads_maybe(schema)
    if isinstance(schema, dict) and isinstance(schema.get("parameters"), dict):
        schema = schema["parameters"]
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(props, dict) and len(props) == 1:
        (name,) = props
        return name if isinstance(name, str) else None
    return None


def openinference_input(v: Any, parameters: Any = None) -> tuple[str | None, str | None]:
    """(args, bare) of an OpenInference TOOL span's ``input.value``.

    A JSON object is the args; any other value (a one-parameter tool's bare
    argument) is named by a one-property ``tool.parameters`` schema, else the
    args are missing and the value is kept as ``bare`` (named per trace).
    """
    if isinstance(v, str):
        v = loads_maybe(v)
    if isinstance(v, dict):
        return dumps(v), None
    if v is None:
        return None, None
    param = _one_param(parameters)
    if param is not None:
        return dumps({param: v}), None
    return None, dumps(v)


def traceloop_input(v: Any) -> tuple[str | None, str | None]:
    """(args, call id) of ``traceloop.entity.input``: LangChain's callback payload gives
    its ``inputs``; ``{"args": [...], "kwargs": {...}}`` the kwargs, with positional
    args under "args"; any other value ``as_args``."""
    cb = callback_args(v)
    if cb is not None:
        return cb
    if isinstance(v, str):
        v = loads_maybe(v)
    if isinstance(v, dict) and set(v) <= {"args", "kwargs"} and v:
        pos = v.get("args") or []
        k = v.get("kwargs")
        kw: dict[str, Any] = k if isinstance(k, dict) else {}
        return dumps({"args": pos, **kw} if pos else dict(kw)), None
    return args_text(v), None


def traceloop_output(v: Any) -> tuple[str | None, str | None]:
    """``tool_result`` of ``traceloop.entity.output``, a JSON string literal read as its text."""
    if isinstance(v, str):
        p = loads_maybe(v)
        return tool_result(p if isinstance(p, str) else v)
    return tool_result(as_text(v))


def args_text(v: Any) -> str | None:
    """``as_args`` as compact JSON text (None when not recorded)."""
    a = as_args(v)
    return None if a is None else dumps(a)


def turn_args(v: Any) -> tuple[str | None]:
    """(args,) of a Sponsio turn's ``sponsio.event.tool_args``."""
    return (args_text(v),)


def turn_type(event_type: Any, blocked: Any = None) -> tuple[str | None]:
    """(event_type,) of a Sponsio turn: a tool call the guard blocked never ran, so it is
    a ``tool_attempt`` (SEMANTICS §4.2)."""
    et = as_text(event_type)
    if blocked is True and et in (None, "tool_call"):
        et = "tool_attempt"
    return (et,)
