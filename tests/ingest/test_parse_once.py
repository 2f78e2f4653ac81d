"""Property: the parse-once readers of tool payloads give what the general rules give.

``payloads.tool_args`` parses recorded tool arguments once where the general rule
(LangChain's callback payload first, ``callback_args``, else ``as_args``) parsed
them twice; ``payloads.tool_message`` skips parsing a string that cannot hold a
``"content"`` key. Both must answer exactly as the general rules do, on
JSON-shaped strings with the keys those rules look for, written plainly or
with every character escaped, and on any text.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest import payloads
from sponsio_audit.ingest.values import as_args, dumps, loads_maybe

KEYS = st.sampled_from(
    ["input_str", "inputs", "kwargs", "tool_call_id", "content", "type", "data", "output",
     "lc", "id", "args", "x"]
)  # fmt: skip
LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4),
    st.sampled_from(["tool", "ToolMessage", "{}", '{"a": 1}', '"s"']),
)  # fmt: skip
VALUE = st.recursive(
    LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def recorded(draw: Any) -> Any:
    """A recorded attribute value: JSON text (plain, escaped, padded) or a plain value."""
    v = draw(VALUE)
    how = draw(st.sampled_from(["plain", "escaped", "padded", "raw", "text"]))
    if how == "raw":
        return v
    if how == "text":
        return draw(st.text(max_size=12))
    text = json.dumps(v, ensure_ascii=True)
    if how == "escaped":  # every key character written as a \\u escape
        text = (
            json.dumps(v)
            .replace('"content"', '"\\u0063ontent"')
            .replace('"inputs"', '"\\u0069nputs"')
        )
    if how == "padded":
        text = " " + text
    return text


def _old_tool_args(v: Any) -> tuple[str | None, str | None]:
    cb = payloads.callback_args(v)
    if cb is not None:
        return cb
    a = as_args(v)
    return None if a is None else dumps(a), None


@settings(max_examples=400, deadline=None)
@given(recorded())
def test_tool_args_parse_once_equals_the_general_rule(v: Any) -> None:
    assert payloads.tool_args(v) == _old_tool_args(v)


@settings(max_examples=400, deadline=None)
@given(recorded())
def test_tool_message_skips_only_what_cannot_be_one(v: Any) -> None:
    if not isinstance(v, str):
        return  # only strings are pre-checked
    parsed = loads_maybe(v) if v.startswith("{") else None
    want = payloads.tool_message(parsed) if isinstance(parsed, dict) else None
    assert payloads.tool_message(v) == want


def test_a_langchain_tool_message_is_still_read() -> None:
    msg = {"type": "tool", "data": {"content": "sunny", "tool_call_id": "c1"}}
    assert payloads.tool_result(json.dumps(msg)) == ("sunny", "c1")
    escaped = json.dumps(msg).replace('"content"', '"\\u0063ontent"')
    assert payloads.tool_result(escaped) == ("sunny", "c1")
    assert payloads.tool_result('{"hotels": ["Ritz"]}') == ('{"hotels": ["Ritz"]}', None)
