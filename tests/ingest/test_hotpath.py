"""Properties of the ingest hot path's shortcuts: each gives what the general rule gives.

- ``json_attrs`` reads the common ``stringValue`` / ``intValue`` shapes inline; on
  any list of (well- or ill-formed) OTLP/JSON ``KeyValue`` objects it must equal
  the general rule applied to each item, values, types and key order alike.
- A protobuf attribute list and its OTLP/JSON rendering give equal attributes
  and equal JSON text (the store keeps that text).
- ``dumps`` only searches a value for non-finite floats when orjson wrote
  ``null``; a NaN/inf at any depth is still written as its string spelling.
- ``dumps_attrs`` (no search at all) writes every attribute dict a decoder makes
  as ``dumps`` does: the decoders leave no non-finite float in one.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from sponsio_audit.ingest import values

SHORT = 8
"""``MAX_STR`` during these tests, so cut strings are cheap to generate."""

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=SHORT + 4)
int64 = st.integers(-(2**63), 2**63 - 1)
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])
double = st.one_of(st.floats(), non_finite)  # plain st.floats() rarely draws non-finite
keys = st.sampled_from(["a", "b", "service.name", "Ünï"])
members = st.sampled_from(["stringValue", "intValue", "boolValue", "doubleValue", "bytesValue"])


@pytest.fixture(autouse=True)
def _short_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(values, "MAX_STR", SHORT)


@st.composite
def json_any(draw: Any, depth: int = 0) -> Any:
    """An OTLP/JSON ``AnyValue``: every form, spelled every accepted way, plus odd ones."""
    forms = [
        st.builds(lambda s: {"stringValue": s}, text),
        st.builds(lambda i: {"intValue": i}, st.one_of(int64.map(str), int64, text)),
        st.builds(lambda i: {"intValue": i}, st.floats(allow_nan=False, allow_infinity=False)),
        st.builds(lambda b: {"boolValue": b}, st.one_of(st.booleans(), st.integers(0, 2))),
        st.builds(lambda d: {"doubleValue": d}, st.one_of(double, double.map(repr), text)),
        st.builds(lambda b: {"bytesValue": b}, st.one_of(text, st.integers())),
        st.dictionaries(members, st.one_of(st.none(), text, int64.map(str), int64), max_size=3),
        st.sampled_from([{}, {"stringValue": None}, {"arrayValue": None}, {"other": 1}]),
        st.one_of(st.none(), text, st.integers()),
    ]
    if depth < 3:
        items = st.lists(json_any(depth + 1), max_size=3)
        forms.append(items.map(lambda xs: {"arrayValue": {"values": xs}}))
        forms.append(json_kvs(depth + 1).map(lambda kvs: {"kvlistValue": {"values": kvs}}))
    return draw(st.one_of(forms))


@st.composite
def json_kv(draw: Any, depth: int = 0) -> Any:
    """A ``KeyValue``, usually well-formed, sometimes not an object or missing a member."""
    key, value = draw(keys), draw(json_any(depth))
    odd = [
        {"key": key, "value": value},
        {"key": key},
        {"value": value},
        {"key": draw(st.integers() | st.none()), "value": value},
        draw(st.one_of(st.none(), text, st.lists(st.integers(), max_size=2))),
    ]
    return odd[draw(st.sampled_from([0, 0, 0, 1, 2, 3, 4]))]


def json_kvs(depth: int = 0) -> st.SearchStrategy[list[Any]]:
    return st.lists(json_kv(depth), max_size=6)


def _general(kvs: list[Any]) -> dict[str, Any]:
    """The general rule alone, item by item (what the inline shortcuts must agree with)."""
    out: dict[str, Any] = {}
    for kv in kvs:
        values._json_kv(out, kv, 0)
    return out


def _kv(value: Any, key: Any = "a") -> dict[str, Any]:
    return {"key": key, "value": value}


@given(json_kvs())
@example([_kv({"stringValue": None, "intValue": "5"}), _kv({"stringValue": 3, "intValue": "x"})])
@example([_kv({"stringValue": "x" * (SHORT + 1)}), _kv({"intValue": "x"}, "b")])
@example([_kv({"intValue": "5"}), _kv({"stringValue": "b"}, 5), _kv({"stringValue": "c"})])
def test_json_attrs_shortcuts_equal_the_general_rule(kvs: list[Any]) -> None:
    # repr: same values, same types (1 vs True vs 1.0) and same key order
    assert repr(values.json_attrs(kvs)) == repr(_general(kvs))


@st.composite
def pb_any(draw: Any, depth: int = 0) -> AnyValue:
    """A protobuf ``AnyValue`` of any form (or unset), nested a few levels."""
    kind = draw(
        st.sampled_from(["s", "i", "b", "d", "y", "none", "arr", "kv"][: 8 if depth < 3 else 6])
    )
    v = AnyValue()
    if kind == "s":
        v.string_value = draw(text)
    elif kind == "i":
        v.int_value = draw(int64)
    elif kind == "b":
        v.bool_value = draw(st.booleans())
    elif kind == "d":
        v.double_value = draw(double)
    elif kind == "y":
        v.bytes_value = draw(st.binary(max_size=8))
    elif kind == "arr":
        v.array_value.SetInParent()
        v.array_value.values.extend(draw(st.lists(pb_any(depth + 1), max_size=3)))
    elif kind == "kv":
        v.kvlist_value.SetInParent()
        v.kvlist_value.values.extend(draw(pb_kvs(depth + 1)))
    return v


def pb_kvs(depth: int = 0) -> st.SearchStrategy[list[KeyValue]]:
    kv = st.builds(lambda k, v: KeyValue(key=k, value=v), keys, pb_any(depth))
    return st.lists(kv, max_size=5)


def _to_json(v: AnyValue, spell_double: bool) -> dict[str, Any]:
    """The OTLP/JSON rendering of a protobuf ``AnyValue`` (int64 as a string, per the spec)."""
    which = v.WhichOneof("value")
    if which == "string_value":
        return {"stringValue": v.string_value}
    if which == "int_value":
        return {"intValue": str(v.int_value)}
    if which == "bool_value":
        return {"boolValue": v.bool_value}
    if which == "double_value":
        d = v.double_value
        finite = math.isfinite(d)
        spelled = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}.get(str(d))
        return {"doubleValue": d if finite or not spell_double else spelled}
    if which == "bytes_value":
        return {"bytesValue": base64.b64encode(v.bytes_value).decode()}
    if which == "array_value":
        return {"arrayValue": {"values": [_to_json(x, spell_double) for x in v.array_value.values]}}
    if which == "kvlist_value":
        return {"kvlistValue": {"values": _kvs_json(v.kvlist_value.values, spell_double)}}
    return {}


def _kvs_json(kvs: Any, spell_double: bool) -> list[dict[str, Any]]:
    return [{"key": kv.key, "value": _to_json(kv.value, spell_double)} for kv in kvs]


@given(pb_kvs(), st.booleans())
def test_protobuf_and_json_attributes_agree(kvs: list[KeyValue], spell_double: bool) -> None:
    pb = values.pb_attrs(kvs)
    js = values.json_attrs(_kvs_json(kvs, spell_double))
    assert repr(pb) == repr(js)
    assert values.dumps(pb) == values.dumps(js)


@given(json_kvs(), pb_kvs())
def test_attribute_dicts_are_written_as_dumps_writes_them(
    js: list[Any], pb: list[KeyValue]
) -> None:
    for attrs in (values.json_attrs(js), values.pb_attrs(pb)):
        assert values.dumps_attrs(attrs) == values.dumps(attrs)


def test_dumps_attrs_examples() -> None:
    """What orjson refuses (a >64-bit int, a lone surrogate) is still written by ``dumps``."""
    for v in ({"a": 2**70}, {"a": "\ud800"}, {"a": [1.5, None, "null"]}, {}):
        assert values.dumps_attrs(v) == values.dumps(v)


plain = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), double, text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), inner, max_size=3),
    ),
    max_leaves=12,
)


def _spelled(v: Any) -> Any:
    """What ``dumps`` promises: non-finite floats as "nan"/"inf"/"-inf", tuples as lists."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_spelled(x) for x in v]
    if isinstance(v, dict):
        return {k: _spelled(x) for k, x in v.items()}
    return v


def _refuse_constant(name: str) -> Any:
    raise AssertionError(f"dumps wrote the non-JSON literal {name}")


@given(plain)
def test_dumps_spells_non_finite_floats_at_any_depth(v: Any) -> None:
    out = values.dumps(v)
    assert json.loads(out, parse_constant=_refuse_constant) == _spelled(v)


def test_dumps_examples() -> None:
    nan = float("nan")
    assert values.dumps({"a": {"b": [1, (nan, None)]}}) == '{"a":{"b":[1,["nan",null]]}}'
    assert values.dumps({"s": "null", "n": None}) == '{"s":"null","n":null}'
    assert values.dumps([float("-inf"), 2**70]) == '["-inf",1180591620717411303424]'
