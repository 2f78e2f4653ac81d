"""Property: GenAI message text read by the typed fast path gives the facts the dict walk gives.

``messages.input_fields`` / ``output_fields`` first try ``typed_messages`` (msgspec
structs of the usual ``{role, parts}`` shape) and fall back to the orjson dicts and
``_walk`` (``_input_fields``, ``_output_fields``) whenever the text differs from that
shape in any way. Drawn here: the usual messages, and the same with extra keys, wrong
types, nulls, non-ASCII and long strings, odd arguments (big and non-finite numbers,
nesting, strings), messages that are not objects, JSON spelled with odd whitespace,
duplicate keys and lone surrogate escapes; every text must give what the old path gives,
and the usual shape must be read by the fast path.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest import messages, typed_messages

word = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["", "Paris", "Ünïcødé ✓", "x" * 3000, "null", "\u2028", "a\nb", "\ud800"]),
)
odd = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), word, st.just([]),
    st.just({}), st.just({"a": [1, {"b": None}]}),
)  # fmt: skip
arguments = st.one_of(
    st.dictionaries(word, st.one_of(word, st.integers(-(2**70), 2**70), st.floats()), max_size=3),
    odd,
    st.just("[" * 50 + "]" * 50).map(json.loads),
)


def _maybe(base: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually ``base``, sometimes (1 in 12) an odd value of any type."""
    return st.sampled_from(range(12)).flatmap(lambda i: odd if i == 5 else base)


def _part(usual_only: bool = False) -> st.SearchStrategy[Any]:
    text = st.fixed_dictionaries({"type": _maybe(st.just("text")), "content": _maybe(word)})
    call = st.fixed_dictionaries(
        {"type": st.just("tool_call"), "name": _maybe(st.sampled_from(["f", "", "søk"]))},
        optional={"id": _maybe(word), "arguments": arguments},
    )
    response = st.fixed_dictionaries(
        {"type": st.just("tool_call_response")}, optional={"id": _maybe(word), "response": odd}
    )
    if usual_only:  # values of the typed shape's types (an odd arguments or response aside)
        return st.one_of(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["text", "image", ""])},
                optional={"content": word, "text": word},
            ),
            st.fixed_dictionaries({}, optional={"content": word, "text": word}),
            st.fixed_dictionaries(
                {"type": st.just("tool_call"), "name": st.sampled_from(["f", "", "søk"])},
                optional={"id": word, "arguments": arguments},
            ),
            st.fixed_dictionaries(
                {"type": st.just("tool_call_response")}, optional={"id": word, "response": odd}
            ),
        )
    other = st.dictionaries(
        st.sampled_from(["type", "content", "text", "id", "name", "arguments", "response", "x"]),
        odd,
        max_size=3,
    )
    return st.one_of(text, text, text, call, call, call, response, response, other, odd)


roles = _maybe(st.sampled_from(["system", "user", "assistant", "tool", "developer", ""]))
usual = st.fixed_dictionaries({"role": roles, "parts": st.lists(_part(), max_size=3)})
message = st.one_of(
    usual,
    usual,
    usual,
    st.fixed_dictionaries({"parts": st.lists(_part(), max_size=2)}),
    st.fixed_dictionaries(
        {"role": roles, "parts": st.lists(_part(), max_size=2)},
        optional={"content": odd, "tool_calls": odd, "tool_call_id": odd, "name": word},
    ),
    st.fixed_dictionaries({"role": roles, "content": odd}),
    odd,
)


@st.composite
def texts(draw: Any) -> str:
    """Messages JSON text, usually as exporters write it, sometimes spelled oddly."""
    listed = st.lists(message, max_size=4)
    doc = draw(st.one_of(listed, listed, listed, odd))
    how = draw(st.sampled_from(["plain", "compact", "indent", "spaced", "dup", "raw"]))
    if how == "raw":
        return draw(st.sampled_from(["", "[", "[]x", "\ufeff[]", " [ ] ", "NaN", "[{]", "null"]))
    if how == "dup" and isinstance(doc, list) and doc and isinstance(doc[0], dict):
        inner = json.dumps(doc[0])[1:-1]
        return "[{" + inner + (", " if inner else "") + '"role": "user"}]'
    sep = {"compact": (",", ":"), "spaced": (" ,  ", " : ")}.get(how)
    return json.dumps(doc, separators=sep, indent=2 if how == "indent" else None,
                      ensure_ascii=draw(st.booleans()))  # fmt: skip


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts(), st.one_of(st.none(), word, st.just('[{"role": "system", "content": "s"}]')))
def test_typed_messages_read_as_the_dict_walk(text: str, instructions: Any) -> None:
    assert messages.input_fields(text, instructions) == messages._input_fields(text, instructions)
    assert messages.output_fields(text) == messages._output_fields(text)


usual_roles = st.sampled_from(["system", "user", "assistant", "tool", "developer", "", "Ü"])
usual_texts = st.lists(
    st.fixed_dictionaries({"parts": st.lists(_part(usual_only=True), max_size=3)},
                          optional={"role": usual_roles}),
    max_size=4,
).map(lambda doc: json.dumps(doc, ensure_ascii=False))  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(usual_texts)
def test_usual_messages_read_as_the_dict_walk(text: str) -> None:
    """Texts mostly of the typed shape (the first property draws mostly other shapes)."""
    assert messages.input_fields(text) == messages._input_fields(text, None)
    assert messages.output_fields(text) == messages._output_fields(text)


def test_the_usual_shape_is_read_by_the_fast_path() -> None:
    """GenAI input and output messages as instrumentations write them are read typed."""
    inp = json.dumps(
        [
            {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
            {"role": "user", "parts": [{"type": "text", "content": "Hotels in Paris?"}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c0", "response": 1}]},
        ]
    )
    out = json.dumps(
        [
            {
                "role": "assistant",
                "parts": [
                    {"type": "text", "content": "Searching."},
                    {"type": "tool_call", "id": "c1", "name": "search", "arguments": {"n": 2}},
                ],
            }
        ]
    )
    assert typed_messages.input_lines(inp) == (
        "system: Be brief.\nuser: Hotels in Paris?\ntool: 1",
        ["Be brief."],
        {"c0": "1"},
    )
    assert typed_messages.output_fields(out) == (
        "Searching.",
        '[["search",{"n":2},"c1"]]',
        None,
    )
    assert messages.input_fields(inp) == messages._input_fields(inp, None)
    assert messages.output_fields(out) == messages._output_fields(out)


def test_odd_texts_are_declined() -> None:
    """Texts of another shape are left to the old path (the typed reader says None)."""
    for text in [
        '[{"role": "user", "content": "hi"}]',  # OpenAI form
        '[{"role": "user", "parts": [], "x": 1}]',  # an unknown key
        '[{"role": null, "parts": []}]',
        '[{"role": "user", "parts": [{"type": "text", "content": 5}]}]',
        '["just text"]',
        '{"messages": []}',
        '[{"role": "user", "parts": [{"type": "text", "content": "\\ud800"}]}]',
        '[{"parts": [{"type": "tool_call", "name": "f", "arguments": NaN}]}]',
        '[{"parts": [{"type": "tool_call", "name": "f", "arguments": ' + "[" * 1030 + "]" * 1030
        + "}]}]",
    ]:  # fmt: skip
        assert typed_messages.input_lines(text) is None, text
        assert typed_messages.output_fields(text) is None, text
