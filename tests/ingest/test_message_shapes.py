"""Property: a message's reading does not depend on keys the reader ignores.

``messages._walk`` stops after the parts of a message that holds just ``role`` and
``parts`` (the GenAI form: nothing more to read); any other key set reads on. A key no
shape names (``extra``) changes nothing, so a message with and without it reads the
same, the short way and the long way: role, pieces, calls, tool results, nameless calls.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest import messages as m

text = st.one_of(st.text(max_size=3), st.none(), st.integers(0, 3), st.just(["a", {"text": "b"}]))
part = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "content": text}),
    st.fixed_dictionaries({"type": st.just("text")}, optional={"text": text}),
    st.fixed_dictionaries(
        {"type": st.just("tool_call")},
        optional={
            "name": st.one_of(st.sampled_from(["f", ""]), st.none(), st.integers()),
            "id": st.one_of(st.just("c1"), st.none(), st.integers()),
            "arguments": st.one_of(st.just({"x": 1}), st.just('{"x": 1}'), st.none()),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_call_response")},
        optional={"id": st.one_of(st.just("c1"), st.integers()), "response": text},
    ),
    st.text(max_size=2),
    st.none(),
)
message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.one_of(st.sampled_from(["user", "system", "tool", "assistant", ""]), st.none()),
        "parts": st.one_of(st.lists(part, max_size=3), st.none(), st.just("p")),
        "content": text,
        "text": text,
        "tool_calls": st.just([{"id": "c2", "function": {"name": "g", "arguments": "{}"}}]),
        "tool_call_id": st.one_of(st.just("c3"), st.integers()),
        "id": st.just("c4"),
    },
)


def _read(msg: dict[str, Any]) -> tuple[Any, ...]:
    pieces: list[str] = []
    calls: list[m.Call] = []
    results: list[tuple[str, str]] = []
    unnamed: list[int] = []
    role = m._walk(msg, pieces, calls, results, unnamed)
    return role, pieces, calls, results, len(unnamed)


@settings(max_examples=500, deadline=None)
@given(message)
def test_a_key_no_shape_names_changes_nothing(msg: dict[str, Any]) -> None:
    assert _read(msg) == _read({**msg, "extra": 1})


def test_role_and_parts_read_whole() -> None:
    """The GenAI form read the short way: every part, a tool message's response a result."""
    msg = {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": "c1", "response": {"ok": True}},
            {"type": "tool_call", "name": "f", "id": "c2", "arguments": {"x": 1}},
            {"type": "tool_call", "id": "c3"},
            {"type": "text", "content": "t"},
        ],
    }
    assert _read(msg) == (
        "tool",
        ['{"ok":true}', "t"],
        [m.Call("f", {"x": 1}, "c2")],
        [("c1", '{"ok":true}')],
        1,
    )
    assert _read({"role": "tool", "parts": [{"type": "text", "content": "t"}]}) == (
        "tool", ["t"], [], [], 0
    )  # fmt: skip
