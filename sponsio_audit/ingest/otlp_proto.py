"""OTLP protobuf ``ExportTraceServiceRequest`` / ``TracesData`` bodies → span tuples.

Decoded with the generated ``opentelemetry-proto`` classes (upb in C); the two
messages have identical bytes. Attribute values go through ``values.pb_attrs``
so that a protobuf body and its OTLP/JSON rendering give equal tuples.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sponsio_audit.ingest.sniff import BadRecord
from sponsio_audit.ingest.spans import GENAI_EVENTS, KINDS, STATUS, SpanTuple
from sponsio_audit.ingest.values import cut, dumps, pb_attrs


def _event_attrs(events: Any) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for ev in events:
        if ev.name in GENAI_EVENTS:
            out.update(pb_attrs(ev.attributes))
    return out or None


def request_spans(data: bytes) -> list[SpanTuple]:
    """All spans of one protobuf request body, in message order."""
    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(data)
    except (DecodeError, RecursionError, ValueError) as e:
        raise BadRecord(f"invalid OTLP protobuf: {str(e)[:200]}") from None
    out: list[SpanTuple] = []
    append = out.append
    nk, ns = len(KINDS), len(STATUS)
    for rs in req.resource_spans:
        rattrs = pb_attrs(rs.resource.attributes)
        service = rattrs.get("service.name")
        service = service if isinstance(service, str) else None
        rjson = dumps(rattrs)
        for ss in rs.scope_spans:
            scope = ss.scope.name or None
            for sp in ss.spans:
                tid = sp.trace_id
                if not tid:
                    raise BadRecord("span without trace_id")
                sid = sp.span_id
                pid = sp.parent_span_id
                if sp.HasField("status"):
                    st = sp.status
                    c, msg = st.code, st.message
                    code = STATUS[c] if 0 <= c < ns else str(c)
                    status = f"{code}: {cut(msg)}" if msg else code
                else:  # unset status: skip reading its default fields
                    status = STATUS[0]
                k = sp.kind
                events = sp.events
                append(
                    (
                        tid.hex(),
                        sid.hex() if sid else None,
                        pid.hex() if pid else None,
                        cut(sp.name),
                        KINDS[k] if 0 <= k < nk else str(k),
                        sp.start_time_unix_nano,
                        sp.end_time_unix_nano,
                        status,
                        service,
                        scope,
                        pb_attrs(sp.attributes),
                        rjson,
                        _event_attrs(events) if events else None,
                    )
                )
    return out
