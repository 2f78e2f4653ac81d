"""Flattened message attributes → the message dicts ``messages`` reads.

OpenInference records ``llm.input_messages.N.message.{role,content,…}`` and
OpenLLMetry ``gen_ai.prompt.N.{role,content,…}``: one attribute per leaf, the
list index a path segment. ``unflatten`` rebuilds the nested value (numeric
segments as lists, ordered by number); the two ``*_items`` functions reshape
each convention's items into OpenAI-chat message dicts.
"""

from __future__ import annotations

from typing import Any

from sponsio_audit.ingest.values import loads_maybe


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
        path, _, last = k[n:].rpartition(".")
        if path:
            for s in path.split("."):
                nxt = node.get(s)
                if nxt.__class__ is not dict:  # every dict of the tree is a plain one (_own)
                    nxt = {}
                    node[s] = nxt
                node = nxt
        node[last] = _own(v) if isinstance(v, dict) else v
    out = _listify(root)
    return out if isinstance(out, list) else []


def _own(v: dict[str, Any]) -> dict[str, Any]:
    """A copy of a recorded object value's dicts, which a longer key may extend (the span's
    recorded attributes, stored as its raw JSON after, must not change)."""
    return {k: _own(x) if isinstance(x, dict) else x for k, x in v.items()}


def _listify(node: Any, depth: int = 0) -> Any:
    """``unflatten``'s nested dicts (its own, never recorded ones: ``_own``) with the
    all-numeric ones as lists, changed in place."""
    if node.__class__ is not dict or depth > 16:
        return node
    for k in node:
        if not k.isdecimal():  # isdigit() holds for "²", int() fails
            break
    else:
        if node:
            return [_listify(node[k], depth + 1) for k in sorted(node, key=int)]
    for k, v in node.items():
        if v.__class__ is dict:
            node[k] = _listify(v, depth + 1)  # a value replaced: the keys stay as they are
    return node


def openinference_items(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``llm.input_messages.N.message.{role,content,contents…,tool_calls…}`` as message dicts."""
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
        out.append(
            {
                "role": m.get("role"),
                "content": content,
                "tool_calls": calls,
                "tool_call_id": m.get("tool_call_id"),
            }
        )
    return out


def openllmetry_items(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``gen_ai.prompt.N.{role,content,tool_calls.K.{name,arguments}}`` as message dicts."""
    out = []
    for item in unflatten(attrs, prefix):
        if isinstance(item, dict):
            content = item.get("content")
            if isinstance(content, str):
                parsed = loads_maybe(content)
                content = parsed if isinstance(parsed, list) else content
            out.append({**item, "content": content})
    return out
