"""Property: the msgspec fast path reads an OTLP/JSON line exactly as the general path does.

``otlp_structs.spans`` may decline a line (False: the general path reads it),
but when it answers, the column values and attribute dicts it appends must
equal what ``otlp_json.request_spans`` appends for the same line parsed the
general way, and it must decline every line the
general path rejects (a bad record stays a bad record, with its reason).
The lines are OTLP-shaped documents with odd spellings drawn at every field:
nulls, wrong types, int64 as string or number or out of range, enum names,
non-hex ids, every ``AnyValue`` form, duplicates, unknown fields, deep nesting.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest import otlp_structs
from sponsio_audit.ingest.chunks import _json_record, _record
from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.limits import DEFAULT
from sponsio_audit.ingest.sniff import parse_line
from sponsio_audit.ingest.values import MAX_STR, cut, dumps, dumps_attrs
from tests.ingest.test_formats import EMPTY, UNUSABLE

odd = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
    st.text(max_size=4), st.sampled_from(["", "12", " 7 ", "1_0", "0" * 45 + "1", "x"]),
    st.just([]), st.just({}),
)  # fmt: skip


def _maybe(base: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually ``base``, sometimes (1 in 20) an odd value of any type, so that many
    documents are wholly usual and the fast path answers."""
    return st.sampled_from(range(20)).flatmap(lambda i: odd if i == 7 else base)


ids = _maybe(st.sampled_from(["5B8EFFF798038103D269B633813FC60C", "ab01", "not-hex", "", "0"]))
int64 = _maybe(
    st.one_of(
        st.integers(-(2**63), 2**63 - 1).map(str),
        st.integers(-(2**63), 2**63 - 1),
        st.sampled_from([str(2**63), 2**63, 2**64 + 5, "-9223372036854775809", "1e3"]),
    )
)
enum = _maybe(st.one_of(st.integers(-1, 7), st.sampled_from(["SPAN_KIND_CLIENT", "OK", "2"])))


def _any_value(depth: int) -> st.SearchStrategy[Any]:
    scalar = st.one_of(
        st.fixed_dictionaries({"stringValue": _maybe(st.text(max_size=5))}),
        st.fixed_dictionaries({"intValue": int64}),
        st.fixed_dictionaries({"boolValue": _maybe(st.booleans())}),
        st.fixed_dictionaries({"doubleValue": _maybe(st.floats(allow_nan=False))}),
        st.fixed_dictionaries({"bytesValue": _maybe(st.just("aGk="))}),
        st.fixed_dictionaries({"intValue": int64, "stringValue": st.text(max_size=2)}),
        st.fixed_dictionaries({"intValue": int64, "other": st.just(1)}),
        st.just({}),
        odd,
    )
    if depth <= 0:
        return scalar
    inner = _any_value(depth - 1)
    return st.one_of(
        scalar,
        st.fixed_dictionaries(
            {
                "arrayValue": _maybe(
                    st.fixed_dictionaries({"values": _maybe(st.lists(inner, max_size=3))})
                )
            }
        ),
        st.fixed_dictionaries(
            {"kvlistValue": _maybe(st.fixed_dictionaries({"values": _maybe(_kvs(inner))}))}
        ),
    )


def _kvs(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    kv = st.one_of(
        st.fixed_dictionaries(
            {"key": _maybe(st.sampled_from(["a", "b", "service.name"])), "value": value}
        ),
        st.fixed_dictionaries({"key": st.just("a")}),
        odd,
    )
    return st.lists(kv, max_size=4)


values = _any_value(2)
msg = _maybe(st.text(max_size=3))
attrs = _maybe(_kvs(values))
span = _maybe(
    st.fixed_dictionaries(
        {"traceId": ids},
        optional={
            "spanId": ids, "parentSpanId": ids, "name": _maybe(st.text(max_size=5)),
            "kind": enum, "startTimeUnixNano": int64, "endTimeUnixNano": int64,
            "status": _maybe(st.fixed_dictionaries({}, optional={"code": enum, "message": msg})),
            "attributes": attrs, "droppedAttributesCount": odd,
            "events": _maybe(st.lists(_maybe(st.fixed_dictionaries(
                {"name": _maybe(st.sampled_from(["gen_ai.content.prompt", "exception"]))},
                optional={"attributes": attrs}
            )), max_size=2)),
        },
    )
)  # fmt: skip
scope_spans = _maybe(
    st.fixed_dictionaries(
        {"spans": _maybe(st.lists(span, max_size=3))},
        optional={
            "scope": _maybe(st.fixed_dictionaries({"name": _maybe(st.text(max_size=3))})),
            "instrumentationLibrary": _maybe(st.fixed_dictionaries({"name": st.just("lib")})),
        },
    )
)
resource_spans = _maybe(
    st.one_of(
        st.fixed_dictionaries(
            {"scopeSpans": _maybe(st.lists(scope_spans, max_size=2))},
            optional={"resource": _maybe(st.fixed_dictionaries({"attributes": attrs}))},
        ),
        st.fixed_dictionaries({"instrumentationLibrarySpans": st.lists(scope_spans, max_size=2)}),
    )
)
request = st.one_of(
    st.fixed_dictionaries(
        {"resourceSpans": _maybe(st.lists(resource_spans, max_size=2))},
        optional={"resourceLogs": st.just([]), "extra": odd},
    ),
    st.fixed_dictionaries({"resourceLogs": st.just([])}),
    odd,
)


DECODED = (
    "trace_id", "span_id", "parent_span_id", "name", "kind", "start_ns", "end_ns",
    "status", "service", "scope", "resource",
)  # fmt: skip
"""The columns a decoder fills (``_decoded`` adds ``record``, ``attributes`` and the facts)."""


def _spans(cols: Columns) -> list[dict[str, Any]]:
    """Each span a decoder appended to ``cols``: its column values, attribute dict and
    GenAI event attributes as the conventions read them (None without such events)."""
    n = len(cols.attrs)
    assert {k: len(cols.cols[k]) for k in DECODED} == dict.fromkeys(DECODED, n)
    return [
        {
            **{k: cols.cols[k][i] for k in DECODED},
            "attrs": cols.attrs[i],
            "read": cols.event_attrs.get(i),
        }
        for i in range(n)
    ]


def _general(line: bytes) -> Any:
    """What the general path makes of line 2 of a file: spans, or the exception it raises."""
    doc = parse_line(2, line)
    if isinstance(doc, Exception):
        return doc
    cols = Columns(0, 0)
    try:
        _json_record(doc, cols)
    except Exception as e:  # the record would be skipped: the fast path must decline
        return e
    return _spans(cols)


def _fast(line: bytes) -> list[dict[str, Any]] | None:
    cols = Columns(0, 0)
    return _spans(cols) if otlp_structs.spans(line, cols) else None


def _check(line: bytes) -> None:
    fast = _fast(line)
    general = _general(line)
    if fast is None:
        return
    assert not isinstance(general, Exception), (line, general)
    assert fast == general
    for t in fast:  # the raw JSON of what the fast path read needs no search either
        assert dumps_attrs(t["attrs"]) == dumps(t["attrs"])
    assert [type(v) for t in fast for v in t.values()] == [
        type(v) for t in general for v in t.values()
    ]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request)
def test_fast_path_reads_as_the_general_path(doc: Any) -> None:
    _check(json.dumps(doc).encode())


def test_odd_lines() -> None:
    """Lines the fast path must decline or read the same: bytes the JSON parsers differ on."""
    ok = b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AB","name":"%s"}]}]}]}'
    for name in [b"x", b"\\ud800", b"\xff", b"\xed\xa0\x80", b"caf\xc3\xa9", b"\\u00e9", b"a\x01"]:
        _check(ok % name)
    for extra in [
        b"NaN",
        b"1e400",
        b'"\xff"',
        b"[" * 1100 + b"]" * 1100,
        b"99999999999999999999999",
    ]:
        _check(
            b'{"x":' + extra + b',"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AB"}]}]}]}'
        )
    _check(
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AB","kind":99999999999999999999}]}]}]}'
    )


def test_fast_path_answers_the_usual_line() -> None:
    """The usual SDK spelling is read by the fast path (else it would gain nothing)."""
    line = (
        b'{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":'
        b'{"stringValue":"svc"}}]},"scopeSpans":[{"scope":{"name":"s"},"spans":[{"traceId":'
        b'"0AF7651916CD43DD8448EB211C80319C","spanId":"B7AD6B7169203331","name":"chat m",'
        b'"kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"2","status":{"code":2,'
        b'"message":"boom"},"attributes":[{"key":"gen_ai.usage.input_tokens","value":'
        b'{"intValue":"7"}}]}]}]}]}'
    )
    assert _fast(line) == [
        {
            "trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": "b7ad6b7169203331",
            "parent_span_id": None, "name": "chat m", "kind": "CLIENT", "start_ns": 1,
            "end_ns": 2, "status": "ERROR: boom", "service": "svc", "scope": "s",
            "resource": '{"service.name":"svc"}', "attrs": {"gen_ai.usage.input_tokens": 7},
            "read": None,
        }
    ]  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request, st.booleans())
def test_line_one_reads_as_any_line_with_or_without_a_bom(doc: Any, pretty: bool) -> None:
    """Line 1 of a file (which alone may start with a UTF-8 BOM, and may be a whole
    pretty-printed document) gives the spans, or the skip reason, that the general path
    gives for the same record as line 2 without the BOM."""
    line = json.dumps(doc, indent=2 if pretty else None).encode()
    general = _general(line)
    for first in (line, b"\xef\xbb\xbf" + line):
        cols = Columns(0, 0)
        try:
            _record("otlp_json", 1, first, DEFAULT, cols)
        except Exception as e:
            assert isinstance(general, Exception), (first, e)
            assert str(e) == str(general)
            continue
        assert not isinstance(general, Exception), (first, general)
        assert _spans(cols) == general


def test_both_paths_skip_a_request_with_no_usable_span() -> None:
    """A request whose entries are not objects: the fast path declines and the general
    path names the first such entry; an honestly empty one reads as no span on both."""
    for doc, why in UNUSABLE:
        line = json.dumps(doc).encode()
        assert _fast(line) is None, line
        general = _general(line)
        assert isinstance(general, Exception) and str(general) == why
    for doc in EMPTY:
        line = json.dumps(doc).encode()
        assert _fast(line) == _general(line) == []


def test_strings_of_a_line_past_max_str_bytes_are_cut_as_the_general_path() -> None:
    """A line of at most ``MAX_STR`` bytes holds no string to cut (its span attributes are
    read without length checks, ``otlp_structs._short_attrs``); a longer line is read with
    them: either way as the general path reads it, a long string cut, the rest kept."""
    for size in (MAX_STR - 400, MAX_STR, MAX_STR + 1, MAX_STR + 300):
        big = json.dumps({"key": "big", "value": {"stringValue": "x" * size}})
        line = (
            '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AB","spanId":"01",'
            '"attributes":[' + big + ',{"key":"n","value":{"intValue":"5"}},{"key":"z"},'
            '{"key":"s","value":{"stringValue":"short"}}]}]}]}]}'
        ).encode()
        fast = _fast(line)
        assert fast is not None
        _check(line)
        attrs = fast[0]["attrs"]
        assert (len(attrs["big"]) > MAX_STR) == (size > MAX_STR)  # the cut's marker
        assert attrs["big"] == cut("x" * size)
        assert (attrs["n"], attrs["z"], attrs["s"]) == (5, None, "short")
