"""OTLP/JSON ``ExportTraceServiceRequest`` / ``TracesData`` → ``Columns`` (the general path).

Parsed with the ``json`` module (not ``json_format``, which reads ids as base64):
hex ids are lower-cased, non-hex ids kept as opaque strings, int64 accepted as
numbers or strings, enums as integers or names, every ``AnyValue`` form
accepted, unknown fields ignored, old ``instrumentationLibrarySpans`` accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.spans import GENAI_EVENTS, KINDS, STATUS
from sponsio_audit.ingest.values import cut, dumps, json_attrs, norm_id, to_int

_KIND_NAMES = {f"SPAN_KIND_{k}": k for k in KINDS}
_STATUS_NAMES = {f"STATUS_CODE_{s}": s for s in STATUS}


def _enum(v: Any, names: dict[str, str], table: tuple[str, ...]) -> str:
    """An enum written as a number (or numeric string) or as its proto name → its short name."""
    if type(v) is int and 0 <= v < len(table):  # the usual spelling
        return table[v]
    if isinstance(v, str):
        return names.get(v, v)
    i = to_int(v)
    return table[i] if i is not None and 0 <= i < len(table) else str(v if v is not None else 0)


def _status(st: Any) -> str:
    """Status code name, then ": message" when a message was recorded."""
    if not isinstance(st, dict):
        return STATUS[0]
    code = _enum(st.get("code"), _STATUS_NAMES, STATUS)
    msg = st.get("message")
    return f"{code}: {cut(msg)}" if isinstance(msg, str) and msg else code


def _id_reader() -> Callable[[Any], str | None]:
    """``norm_id`` memoised for one request: a trace id recurs on every span of the
    trace and a span id as its children's parent id, so most ids are read once."""
    memo: dict[str, str | None] = {}

    def read(v: Any) -> str | None:
        if type(v) is not str:
            return norm_id(v)
        r = memo.get(v)
        if r is None:
            r = memo[v] = norm_id(v)
        return r

    return read


def _event_attrs(events: Any) -> dict[str, Any] | None:
    if not isinstance(events, list) or not events:
        return None
    out: dict[str, Any] = {}
    for ev in events:
        if isinstance(ev, dict) and ev.get("name") in GENAI_EVENTS:
            out.update(json_attrs(ev.get("attributes")))
    return out or None


def request_spans(doc: Any, cols: Columns) -> None:
    """Append all spans of one OTLP/JSON request document to ``cols``, in document order.

    An honestly empty request (``resourceSpans`` null, empty, or holding no spans) adds
    nothing; one whose entries are not objects and that yields no span is a ``BadRecord``
    naming the first such entry, never a record read as if it were empty."""
    if not isinstance(doc, dict):
        raise BadRecord("not an OTLP/JSON object")
    if "resourceSpans" not in doc:
        for key, what in (("resourceLogs", "logs"), ("resourceMetrics", "metrics")):
            if key in doc:
                raise BadRecord(f"OTLP {what}, not traces")
        raise BadRecord("no resourceSpans in object")
    c = cols.cols
    tids, sids, pids, names = c["trace_id"], c["span_id"], c["parent_span_id"], c["name"]
    kinds, starts, ends, statuses = c["kind"], c["start_ns"], c["end_ns"], c["status"]
    services, scopes, resources = c["service"], c["scope"], c["resource"]
    out, event_attrs = cols.attrs, cols.event_attrs
    norm = _id_reader()
    rss = doc.get("resourceSpans")
    if rss is None:  # proto3 JSON: null is the default, no entries
        rss = []
    if not isinstance(rss, list):
        raise BadRecord("resourceSpans is not a list")
    before = len(out)
    unusable: str | None = None  # the first entry that is not what OTLP puts there
    for i, rs in enumerate(rss):
        if not isinstance(rs, dict):
            unusable = unusable or f"resourceSpans[{i}] is not an object"
            continue
        res = rs.get("resource")
        rattrs = json_attrs(res.get("attributes")) if isinstance(res, dict) else {}
        service = rattrs.get("service.name")
        service = service if isinstance(service, str) else None
        rjson = dumps(rattrs) if cols.raw_json else None
        key = "scopeSpans" if rs.get("scopeSpans") is not None else "instrumentationLibrarySpans"
        sss, at = rs.get(key), f"resourceSpans[{i}].{key}"
        if sss is not None and not isinstance(sss, list):
            unusable = unusable or f"{at} is not a list"
        for j, ss in enumerate(sss if isinstance(sss, list) else []):
            if not isinstance(ss, dict):
                unusable = unusable or f"{at}[{j}] is not an object"
                continue
            sc = ss.get("scope")
            if sc is None:
                sc = ss.get("instrumentationLibrary")
            scope = sc.get("name") if isinstance(sc, dict) else None
            scope = scope if isinstance(scope, str) and scope else None
            spans = ss.get("spans")
            if spans is not None and not isinstance(spans, list):
                unusable = unusable or f"{at}[{j}].spans is not a list"
            for k, sp in enumerate(spans if isinstance(spans, list) else []):
                if not isinstance(sp, dict):
                    unusable = unusable or f"{at}[{j}].spans[{k}] is not an object"
                    continue
                trace_id = norm(sp.get("traceId"))
                if trace_id is None:
                    raise BadRecord("span without traceId")
                name = sp.get("name")
                tids.append(trace_id)
                sids.append(norm(sp.get("spanId")))
                pids.append(norm(sp.get("parentSpanId")))
                names.append(cut(name) if isinstance(name, str) else "")
                kinds.append(_enum(sp.get("kind"), _KIND_NAMES, KINDS))
                starts.append(to_int(sp.get("startTimeUnixNano")))
                ends.append(to_int(sp.get("endTimeUnixNano")))
                statuses.append(_status(sp.get("status")))
                services.append(service)
                scopes.append(scope)
                resources.append(rjson)
                attrs = json_attrs(sp.get("attributes"))
                out.append(attrs)
                events = sp.get("events")
                if events and (ev := _event_attrs(events)):
                    event_attrs[len(out) - 1] = {**ev, **attrs}
    if unusable is not None and len(out) == before:
        raise BadRecord(f"no usable spans: {unusable}")
