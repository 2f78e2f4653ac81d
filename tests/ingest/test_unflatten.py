"""Indexed attributes (``gen_ai.prompt.N.role``, ``llm.input_messages.N.message.…``) read as
the nested messages they flatten (CONVENTIONS.md, OpenLLMetry and OpenInference rows).

The oracle states the convention plainly: split each key after the prefix at its dots,
nest, then a dict whose keys are all decimal numbers is the list of its values in
number order. ``flat_messages.unflatten`` builds it in place for speed; it must give the
same messages for any keys and values, and leave the recorded attributes as they were.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest.flat_messages import unflatten

PREFIX = "gen_ai.prompt."
SEGMENT = st.sampled_from(["0", "1", "2", "10", "²", "role", "content", "tool_calls", "x.y"])
VALUE = st.recursive(
    st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(SEGMENT, inner, max_size=3)
    ),
    max_leaves=6,
)
KEYS = st.lists(SEGMENT, min_size=1, max_size=4).map(".".join)
ATTRS = st.dictionaries(
    st.one_of(KEYS.map(lambda k: PREFIX + k), st.sampled_from(["gen_ai.system", "other.0"])),
    VALUE,
    max_size=8,
)


def _nest(attrs: dict[str, Any]) -> Any:
    root: dict[str, Any] = {}
    for key, value in attrs.items():
        if not key.startswith(PREFIX):
            continue
        *path, last = key[len(PREFIX) :].split(".")
        node = root
        for seg in path:
            if not isinstance(node.get(seg), dict):
                node[seg] = {}
            node = node[seg]
        node[last] = copy.deepcopy(value) if isinstance(value, dict) else value
    return root


def _lists(node: Any, depth: int = 0) -> Any:
    if not isinstance(node, dict) or depth > 16:
        return node
    if node and all(k.isdecimal() for k in node):
        return [_lists(node[k], depth + 1) for k in sorted(node, key=int)]
    return {k: _lists(v, depth + 1) for k, v in node.items()}


@settings(max_examples=1500)
@given(ATTRS)
def test_unflatten_reads_the_convention_and_keeps_the_attributes(attrs: dict[str, Any]) -> None:
    recorded = copy.deepcopy(attrs)
    expected = _lists(_nest(attrs))
    assert unflatten(attrs, PREFIX) == (expected if isinstance(expected, list) else [])
    assert attrs == recorded  # the raw attributes are stored after: never changed
