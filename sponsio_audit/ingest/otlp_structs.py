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
from sponsio_audit.ingest.values import INT64, MAX_DEPTH, MAX_STR, cut, dumps, finite, norm_id


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
                out[kv.key] = n if n is None or -INT64 <= n < INT64 else None
            else:
                out[kv.key] = _any(v, depth)
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
        return _walk(doc.resource_spans or [], cols)
    except Exception:  # msgspec's errors, _Fallback, anything unforeseen: the general path
        return False


_MISS = object()
_HEX = "0123456789abcdefABCDEF"


def _walk(rss: list[ResourceSpans], cols: Columns) -> bool:
    c = cols.cols
    tids, sids, pids, names = c["trace_id"], c["span_id"], c["parent_span_id"], c["name"]
    kinds, starts, ends, statuses = c["kind"], c["start_ns"], c["end_ns"], c["status"]
    services, scopes, resources = c["service"], c["scope"], c["resource"]
    out, event_attrs = cols.attrs, cols.event_attrs
    memo: dict[Any, Any] = {None: None}  # span id → norm_id(id), for this request's parents
    last_raw: Any = _MISS
    trace_id: str | None = None
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
            for sp in sps:
                if (v := sp.trace_id) != last_raw:  # a request's spans come trace by trace
                    last_raw, trace_id = v, norm_id(v)
                    if trace_id is None:
                        return False  # the general path names the reason
                tids.append(trace_id)
                v = sp.span_id
                span_id: Any
                if type(v) is str and v and not v.strip(_HEX):  # ``norm_id`` of hex, inline
                    span_id = memo[v] = v.lower()
                else:
                    span_id = memo.get(v, _MISS)
                    if span_id is _MISS:
                        span_id = memo[v] = norm_id(v)
                sids.append(span_id)
                parent_id = memo.get(v := sp.parent_span_id, _MISS)
                if parent_id is _MISS:
                    parent_id = memo[v] = norm_id(v)
                pids.append(parent_id)
                name = sp.name
                names.append("" if name is None else name if len(name) <= MAX_STR else cut(name))
                kind = sp.kind
                kinds.append(
                    KINDS[kind]
                    if type(kind) is int and 0 <= kind < 6
                    else _enum_of(kind, _KIND_NAMES, KINDS)
                )
                starts.append(_int(sp.start_time_unix_nano))
                ends.append(_int(sp.end_time_unix_nano))
                st = sp.status
                if st is None:
                    statuses.append(STATUS[0])
                elif not st.message and type(code := st.code) is int and 0 <= code < 3:
                    statuses.append(STATUS[code])
                else:
                    statuses.append(_status(st))
                attrs = _attrs(sp.attributes)
                out.append(attrs)
                if sp.events and (ev := _event_attrs(sp.events)):
                    event_attrs[len(out) - 1] = {**ev, **attrs}
            n = len(sps)
            services.extend([service] * n)
            scopes.extend([scope] * n)
            resources.extend([rjson] * n)
    return True
