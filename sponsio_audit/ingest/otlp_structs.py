"""OTLP/JSON trace requests decoded by ``msgspec`` into typed structs → ``Columns``.

The fast path for ``otlp_json.request_spans``: one typed decode of a JSON line
(1.8 µs per span on the bench's lines; the whole fast path 5 µs against 8
for orjson's dicts and their walk) and a walk that appends exactly the
column values ``request_spans`` appends for the same line. The structs
accept only the usual spellings (ids and int64 as strings or numbers, enums
as numbers or names, values of the declared types); any other record
(``null`` where an object or string is expected, numbers outside int64, nesting
as deep as ``MAX_DEPTH``, invalid UTF-8, a long numeric string, logs or metrics)
makes ``spans`` return None and the caller reads that record the general way,
so no record is lost or read differently.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.otlp_json import _KIND_NAMES, _STATUS_NAMES, _enum
from sponsio_audit.ingest.spans import GENAI_EVENTS, KINDS, STATUS
from sponsio_audit.ingest.values import (
    INT64,
    MAX_DEPTH,
    MAX_STR,
    cut,
    dumps,
    finite,
    parent_ids,
    span_ids,
    trace_ids,
)


class _Fallback(Exception):
    """This record needs the general path."""


_NULL = msgspec.Raw(b"null")


class ArrayValue(msgspec.Struct, gc=False):
    """OTLP/JSON ``ArrayValue``."""

    values: list[AnyValue] | None = None


class KeyValueList(msgspec.Struct, gc=False):
    """OTLP/JSON ``KeyValueList``."""

    values: list[KeyValue] | None = None


class AnyValue(msgspec.Struct, rename="camel", gc=False):
    """OTLP/JSON ``AnyValue``: each member UNSET unless present (the first present wins)."""

    string_value: str | UnsetType = UNSET
    int_value: str | int | UnsetType = UNSET
    bool_value: bool | UnsetType = UNSET
    double_value: float | UnsetType = UNSET
    array_value: ArrayValue | UnsetType | None = UNSET
    kvlist_value: KeyValueList | UnsetType | None = UNSET
    bytes_value: str | UnsetType = UNSET


class KeyValue(msgspec.Struct, gc=False):
    """OTLP/JSON ``KeyValue`` (a missing or null value reads as None)."""

    key: str
    value: AnyValue | None = None


class Event(msgspec.Struct, gc=False):
    """A span event; its attributes are decoded only for ``GENAI_EVENTS``."""

    name: str | None = None
    attributes: msgspec.Raw = _NULL  # read only for GenAI events


class Status(msgspec.Struct, gc=False):
    """A span status (code as number or name)."""

    code: int | str | None = None
    message: str | None = None


class Span(msgspec.Struct, rename="camel", gc=False):
    """The span fields ``request_spans`` reads; others are skipped."""

    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    name: str | None = None
    kind: int | str | None = None
    start_time_unix_nano: str | int | None = None
    end_time_unix_nano: str | int | None = None
    status: Status | None = None
    attributes: list[KeyValue] | None = None
    events: list[Event] | None = None


class Scope(msgspec.Struct, gc=False):
    """An instrumentation scope (only its name is read)."""

    name: str | None = None


class ScopeSpans(msgspec.Struct, gc=False):
    """Spans of one scope (``instrumentationLibrary`` is the old name of ``scope``)."""

    scope: Scope | None = None
    instrumentationLibrary: Scope | None = None
    spans: list[Span] | None = None


class Resource(msgspec.Struct, gc=False):
    """A resource (only its attributes are read)."""

    attributes: list[KeyValue] | None = None


class ResourceSpans(msgspec.Struct, rename="camel", gc=False):
    """Spans of one resource (``instrumentationLibrarySpans``: the old name)."""

    resource: Resource | None = None
    scope_spans: list[ScopeSpans] | None = None
    instrumentation_library_spans: list[ScopeSpans] | None = None


class TraceRequest(msgspec.Struct, rename="camel", gc=False):
    """A request line; logs or metrics keys send it to the general path."""

    resource_spans: list[ResourceSpans] | UnsetType | None = UNSET
    resource_logs: msgspec.Raw | UnsetType = UNSET
    resource_metrics: msgspec.Raw | UnsetType = UNSET


_DECODE = msgspec.json.Decoder(TraceRequest).decode
_DECODE_KVS = msgspec.json.Decoder(list[KeyValue] | None).decode


def _int(v: str | int | None) -> int | None:
    """``to_int`` of a decoded int64 field; numbers outside int64 need the general path
    (orjson reads them as floats, which ``request_spans`` spells differently)."""
    if isinstance(v, str):
        if len(v) >= 40:
            raise _Fallback
        try:
            n = int(v)
        except ValueError:
            return None
        return n if -INT64 <= n < INT64 else None
    if v is None:
        return None
    if not -INT64 <= v < INT64:
        raise _Fallback
    return v


def _enum_of(v: int | str | None, names: dict[str, str], table: tuple[str, ...]) -> str:
    if type(v) is int and not -INT64 <= v < INT64:
        raise _Fallback
    return _enum(v, names, table)


def _any(v: AnyValue, depth: int) -> Any:
    """``values.json_any`` of the same value (and ``json_attrs``'s inline forms)."""
    s = v.string_value
    if s is not UNSET:
        return cut(s)
    i = v.int_value
    if i is not UNSET:
        if isinstance(i, str):
            return _int(i)
        return i if -INT64 <= i < INT64 else None
    b = v.bool_value
    if b is not UNSET:
        return b
    d = v.double_value
    if d is not UNSET:
        return finite(d)
    if depth >= MAX_DEPTH:
        raise _Fallback
    a = v.array_value
    if a is not UNSET:
        vals = a.values if a is not None else None
        return [_any(x, depth + 1) for x in vals] if vals else []
    kv = v.kvlist_value
    if kv is not UNSET:
        return _attrs(kv.values if kv is not None else None, depth + 1)
    by = v.bytes_value
    if by is not UNSET:
        return cut(by)
    return None


def _attrs(kvs: list[KeyValue] | None, depth: int = 0) -> dict[str, Any]:
    """``values.json_attrs`` of the same list (later duplicates win)."""
    out: dict[str, Any] = {}
    if kvs:
        for kv in kvs:
            v = kv.value
            if v is None:
                out[kv.key] = None
            elif (s := v.string_value) is not UNSET:
                out[kv.key] = s if len(s) <= MAX_STR else cut(s)
            elif type(i := v.int_value) is str and len(i) < 40:  # ``_any``'s int, inline
                try:
                    n: int | None = int(i)
                except ValueError:
                    n = None
                out[kv.key] = n if n is None or _LOW <= n < INT64 else None
            else:
                out[kv.key] = _any(v, depth)
    return out


_LOW = -INT64


def _short_attrs(sps: list[Span]) -> list[dict[str, Any]]:
    """``_attrs`` of each span's attributes, from a line of at most ``MAX_STR`` bytes (so no
    string in it is cut: a JSON string has no more characters than bytes), in one loop over
    the scope: ``_attrs`` without its length checks and per-span call (1.3 µs of 7.5 per
    bench span, instruction counts)."""
    out = []
    for sp in sps:
        d: dict[str, Any] = {}
        kvs = sp.attributes
        if kvs:
            for kv in kvs:
                v = kv.value
                try:
                    s = v.string_value  # type: ignore[union-attr]
                except AttributeError:  # a missing or null value (None)
                    d[kv.key] = None
                    continue
                if s is not UNSET:
                    d[kv.key] = s
                elif type(i := v.int_value) is str and len(i) < 40:  # type: ignore[union-attr]
                    try:
                        n: int | None = int(i)
                    except ValueError:
                        n = None
                    d[kv.key] = n if n is None or _LOW <= n < INT64 else None
                else:
                    d[kv.key] = _any(v, 0)  # type: ignore[arg-type]
        out.append(d)
    return out


def _event_attrs(events: list[Event]) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for ev in events:
        if ev.name in GENAI_EVENTS:
            out.update(_attrs(_DECODE_KVS(ev.attributes)))
    return out or None


def _status(st: Status | None) -> str:
    if st is None:
        return STATUS[0]
    code = st.code
    code = (
        STATUS[code]
        if type(code) is int and 0 <= code < 3
        else _enum_of(code, _STATUS_NAMES, STATUS)
    )
    msg = st.message
    return f"{code}: {cut(msg)}" if msg else code


def spans(line: bytes, cols: Columns) -> bool:
    """Append the spans of one OTLP/JSON trace request line to ``cols`` as
    ``otlp_json.request_spans`` would; False when this record must be read by the
    general path (see module doc; what was appended is then the caller's to drop)."""
    if not line.isascii():
        try:
            line.decode("utf-8")  # msgspec does not check skipped fields' bytes
        except UnicodeDecodeError:
            return False
    try:
        doc = _DECODE(line)
        if doc.resource_logs is not UNSET or doc.resource_metrics is not UNSET:
            return False
        if doc.resource_spans is UNSET:
            return False
        return _walk(doc.resource_spans or [], cols, len(line) <= MAX_STR)
    except Exception:  # msgspec's errors, _Fallback, anything unforeseen: the general path
        return False


def _walk(rss: list[ResourceSpans], cols: Columns, short: bool) -> bool:
    """Append the request's spans to ``cols`` scope by scope, column by column (a list
    comprehension per field and a check over the column, not a loop appending to twelve
    lists per span: 0.2-0.3 µs per span less); False when a trace id is no id. ``short``:
    the line has at most ``MAX_STR`` bytes (``_short_attrs``)."""
    c = cols.cols
    out = cols.attrs
    memo: dict[Any, Any] = {None: None}  # span id → norm_id(id), for this request's parents
    for rs in rss:
        res = rs.resource
        rattrs = _attrs(res.attributes) if res is not None else {}
        service = rattrs.get("service.name")
        service = service if isinstance(service, str) else None
        rjson = dumps(rattrs) if cols.raw_json else None
        sss = rs.scope_spans
        if sss is None:
            sss = rs.instrumentation_library_spans
        for ss in sss or ():
            sc = ss.scope
            if sc is None:
                sc = ss.instrumentationLibrary
            scope = sc.name if sc is not None else None
            scope = scope if scope else None
            sps = ss.spans
            if not sps:
                continue
            tids = trace_ids([sp.trace_id for sp in sps])
            if tids is None:
                return False  # the general path names the reason
            c["trace_id"].extend(tids)
            sids = span_ids([sp.span_id for sp in sps], memo)
            c["span_id"].extend(sids)
            c["parent_span_id"].extend(parent_ids([sp.parent_span_id for sp in sps], memo))
            c["name"].extend(_names([sp.name for sp in sps]))
            c["kind"].extend(_kinds([sp.kind for sp in sps]))
            c["start_ns"].extend(_ints([sp.start_time_unix_nano for sp in sps]))
            c["end_ns"].extend(_ints([sp.end_time_unix_nano for sp in sps]))
            c["status"].extend(_statuses([sp.status for sp in sps]))
            base = len(out)
            out.extend(_short_attrs(sps) if short else [_attrs(sp.attributes) for sp in sps])
            for i, sp in enumerate(sps):
                if sp.events and (ev := _event_attrs(sp.events)):
                    cols.event_attrs[base + i] = {**ev, **out[base + i]}
            n = len(sps)
            c["service"].extend([service] * n)
            c["scope"].extend([scope] * n)
            c["resource"].extend([rjson] * n)
    return True


def _names(raw: list[Any]) -> list[Any]:
    """Span names: None read as "", long ones cut."""
    try:
        if max(map(len, raw)) <= MAX_STR:  # TypeError: a None among them
            return raw
    except TypeError:
        pass
    return ["" if v is None else v if len(v) <= MAX_STR else cut(v) for v in raw]


def _kinds(raw: list[Any]) -> list[str]:
    """Span kind names: usually all numbers in range, looked up by one ``map``."""
    try:
        if min(raw) >= 0 and max(raw) < len(KINDS):
            return list(map(KINDS.__getitem__, raw))
    except TypeError:  # not all numbers
        pass
    return [
        KINDS[k] if type(k) is int and 0 <= k < 6 else _enum_of(k, _KIND_NAMES, KINDS) for k in raw
    ]


def _ints(raw: list[Any]) -> list[Any]:
    """``_int`` of each int64 field: usually all decimal strings, read by one ``map(int)``."""
    try:
        if max(map(len, raw)) < 40:
            n = list(map(int, raw))
            if min(n) >= -INT64 and max(n) < INT64:
                return n
    except (TypeError, ValueError):  # not all strings, or one not a number
        pass
    return [_int(v) for v in raw]


def _statuses(raw: list[Any]) -> list[str]:
    """``_status`` of each span, the usual message-less code inline."""
    s0 = STATUS[0]
    return [
        s0
        if st is None
        else STATUS[st.code]
        if not st.message and type(st.code) is int and 0 <= st.code < 3
        else _status(st)
        for st in raw
    ]
