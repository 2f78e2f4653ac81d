"""OTLP protobuf ``ExportTraceServiceRequest`` / ``TracesData`` bodies → ``Columns``.

Decoded with the generated ``opentelemetry-proto`` classes (upb in C); the two
messages have identical bytes. Attribute values go through ``values.pb_attrs``
so that a protobuf body and its OTLP/JSON rendering give equal columns.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.spans import GENAI_EVENTS, KINDS, STATUS
from sponsio_audit.ingest.values import MAX_STR, cut, dumps, pb_attrs


def _event_attrs(events: Any) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for ev in events:
        if ev.name in GENAI_EVENTS:
            out.update(pb_attrs(ev.attributes))
    return out or None


def request_spans(data: bytes, cols: Columns) -> None:
    """Append all spans of one protobuf request body to ``cols``, in message order."""
    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(data)
    except (DecodeError, RecursionError, ValueError) as e:
        raise BadRecord(f"invalid OTLP protobuf: {str(e)[:200]}") from None
    c = cols.cols
    tids, sids, pids, names = c["trace_id"], c["span_id"], c["parent_span_id"], c["name"]
    kinds, starts, ends, statuses = c["kind"], c["start_ns"], c["end_ns"], c["status"]
    services, scopes, resources = c["service"], c["scope"], c["resource"]
    out, event_attrs = cols.attrs, cols.event_attrs
    nk, ns = len(KINDS), len(STATUS)
    for rs in req.resource_spans:
        rattrs = pb_attrs(rs.resource.attributes)
        service = rattrs.get("service.name")
        service = service if isinstance(service, str) else None
        rjson = dumps(rattrs) if cols.raw_json else None
        for ss in rs.scope_spans:
            scope = ss.scope.name or None
            sps = ss.spans
            for sp in sps:
                tid = sp.trace_id
                if not tid:
                    raise BadRecord("span without trace_id")
                tids.append(tid.hex())
                sids.append(sid.hex() if (sid := sp.span_id) else None)
                pids.append(pid.hex() if (pid := sp.parent_span_id) else None)
                name = sp.name
                names.append(name if len(name) <= MAX_STR else cut(name))
                k = sp.kind
                kinds.append(KINDS[k] if 0 <= k < nk else str(k))
                starts.append(sp.start_time_unix_nano)
                ends.append(sp.end_time_unix_nano)
                if sp.HasField("status"):
                    st = sp.status
                    no, msg = st.code, st.message
                    code = STATUS[no] if 0 <= no < ns else str(no)
                    statuses.append(f"{code}: {cut(msg)}" if msg else code)
                else:  # unset status: skip reading its default fields
                    statuses.append(STATUS[0])
                attrs = pb_attrs(sp.attributes)
                out.append(attrs)
                events = sp.events
                if events and (ev := _event_attrs(events)):
                    event_attrs[len(out) - 1] = {**ev, **attrs}
            n = len(sps)
            services.extend([service] * n)
            scopes.extend([scope] * n)
            resources.extend([rjson] * n)
