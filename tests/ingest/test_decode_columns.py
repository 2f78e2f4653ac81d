"""The OTLP decoders append straight to a chunk's ``Columns``: each record all or nothing.

A record's spans go into the column lists as they are read, so a record that fails
late (a bad span after good ones, a limit, the msgspec fast path declining halfway)
must leave no row behind, and the facts must stay aligned with their spans
(GenAI span-event attributes included, CONVENTIONS.md "Span -> event": span
attributes win). Real decoders on real bytes (JSON lines, protobuf bodies made with
the ``opentelemetry-proto`` classes), through ``chunks.decode``.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from typing import Any

import pyarrow as pa
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sponsio_audit.ingest import otlp_structs
from sponsio_audit.ingest.chunks import Decoded, RecordChunk, decode
from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.limits import Limits

TID = "0af7651916cd43dd8448eb211c80319c"


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(sid: str, tool: str | None, *, events: list[Any] | None = None, **extra: Any) -> Any:
    attrs = [_kv("gen_ai.operation.name", "execute_tool")]
    if tool is not None:
        attrs.append(_kv("gen_ai.tool.name", tool))
    attrs += [_kv(k, v) for k, v in extra.items()]
    span = {
        "traceId": TID,
        "spanId": sid,
        "name": f"execute_tool {tool}",
        "kind": 1,
        "startTimeUnixNano": "1700000000000001000",
        "endTimeUnixNano": "1700000000000002000",
        "attributes": attrs,
    }
    if events is not None:
        span["events"] = events
    return span


def _line(*spans: Any) -> bytes:
    req = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_kv("service.name", "svc")]},
                "scopeSpans": [{"scope": {"name": "s"}, "spans": list(spans)}],
            }
        ]
    }
    return json.dumps(req).encode()


def _decode(fmt: str, records: list[bytes], limits: Limits | None = None) -> Decoded:
    recs: list[tuple[int, bytes | Any]] = [(no, r) for no, r in enumerate(records, start=2)]
    chunk = RecordChunk(fmt, 1, 1, recs, **({"limits": limits} if limits else {}))
    return decode(chunk)


def _col(batch: pa.RecordBatch | pa.Table, name: str) -> list[Any]:
    return batch.column(name).to_pylist()


def _check_aligned(d: Decoded) -> None:
    """Every spans row has its facts row: same ids, records and count."""
    assert d.spans.num_rows == d.facts.num_rows
    for k in ("trace_id", "span_id", "record"):
        assert _col(d.spans, k) == _col(d.facts, k)


def test_a_late_bad_span_costs_its_record_only() -> None:
    """Record 3's second span has no trace id (general path: "span without traceId"): none
    of record 3's spans stay, records 2 and 4 are read whole."""
    good = _line(_span("0000000000000001", "a"), _span("0000000000000002", "b"))
    bad_span = {**_span("0000000000000004", "d"), "traceId": None}
    bad = _line(_span("0000000000000003", "c"), bad_span)
    last = _line(_span("0000000000000005", "e"))
    d = _decode("otlp_json", [good, bad, last])
    assert d.skipped == [(3, "span without traceId")]
    assert _col(d.spans, "span_id") == ["0000000000000001", "0000000000000002", "0000000000000005"]
    assert _col(d.spans, "record") == [2, 2, 4]
    assert _col(d.facts, "tool") == ["a", "b", "e"]
    _check_aligned(d)
    assert d.records == len(set(_col(d.spans, "record"))) + len(d.skipped)


def test_fast_path_declining_late_leaves_no_duplicate() -> None:
    """The msgspec path reads span 1's scope, then declines at span 2 in the next scope (a
    kind beyond int64, which only the general path spells: as its number); the general path
    reads the line again: each span once."""
    odd = {**_span("0000000000000002", "b"), "kind": 2**63 + 5}
    req = json.loads(_line(_span("0000000000000001", "a")))
    req["resourceSpans"][0]["scopeSpans"].append({"scope": {"name": "s"}, "spans": [odd]})
    line = json.dumps(req).encode()
    cols = Columns(0, 0)
    assert otlp_structs.spans(line, cols) is False
    assert len(cols.attrs) == 1  # span 1 was appended before the fast path declined
    d = _decode("otlp_json", [line])
    assert d.skipped == []
    assert _col(d.spans, "span_id") == ["0000000000000001", "0000000000000002"]
    assert _col(d.spans, "kind") == ["INTERNAL", str(2**63 + 5)]
    assert _col(d.facts, "tool") == ["a", "b"]
    _check_aligned(d)


def test_protobuf_record_with_a_span_without_trace_id_is_skipped_whole() -> None:
    """Protobuf: the second span of record 2 has no trace id; record 3 is read."""
    req = ExportTraceServiceRequest()
    ss = req.resource_spans.add().scope_spans.add()
    for sid, trace in ((1, bytes.fromhex(TID)), (2, b"")):
        sp = ss.spans.add(trace_id=trace, span_id=sid.to_bytes(8, "big"), name="execute_tool t")
        kv = sp.attributes.add(key="gen_ai.operation.name")
        kv.value.string_value = "execute_tool"
    bad = req.SerializeToString()
    del ss.spans[1]
    good = req.SerializeToString()
    d = _decode("otlp_proto", [bad, good])
    assert d.skipped == [(2, "span without trace_id")]
    assert _col(d.spans, "record") == [3]
    assert _col(d.spans, "span_id") == ["0000000000000001"]
    _check_aligned(d)


def test_limits_are_checked_per_record_spans_first() -> None:
    """Record 2 has 3 spans (limit 2) and a span of 4 attributes (limit 3): the span count is
    named; record 3 (one span of 4 attributes) is named for its attributes; record 4 is read."""
    many = _line(
        _span("0000000000000001", "a"),
        _span("0000000000000002", "b", x=1, y=2),
        _span("0000000000000003", "c"),
    )
    wide = _line(_span("0000000000000004", "d", x=1, y=2))
    fine = _line(_span("0000000000000005", "e"))
    d = _decode("otlp_json", [many, wide, fine], Limits(spans_per_record=2, attributes=3))
    assert d.skipped == [
        (2, "request of 3 spans (limit spans_per_record=2)"),
        (3, "span with 4 attributes (limit attributes=3)"),
    ]
    assert _col(d.spans, "span_id") == ["0000000000000005"]
    _check_aligned(d)


def test_genai_event_attributes_reach_the_facts_of_their_own_span() -> None:
    """Span 2 names its tool only on a ``gen_ai.content.prompt`` event: its facts read it, its
    raw attributes do not hold it; span 3's own attribute wins over its event's; spans 1 and
    4 have no such event (a later span's event must not shift onto them)."""

    def ev(tool: str) -> list[Any]:
        return [{"name": "gen_ai.content.prompt", "attributes": [_kv("gen_ai.tool.name", tool)]}]

    spans = [
        _span("0000000000000001", "a"),
        _span("0000000000000002", None, events=ev("b")),
        _span("0000000000000003", "c", events=ev("x")),
        _span("0000000000000004", "d", events=[{"name": "exception", "attributes": []}]),
    ]
    for fmt, rec in (("otlp_json", _line(*spans)), ("otlp_proto", _proto(spans))):
        d = _decode(fmt, [rec])
        assert _col(d.facts, "tool") == ["a", "b", "c", "d"], fmt
        raw = [json.loads(a) for a in _col(d.spans, "attributes")]
        assert "gen_ai.tool.name" not in raw[1], fmt
        assert raw[2]["gen_ai.tool.name"] == "c", fmt
        _check_aligned(d)


def _proto(spans: list[Any]) -> bytes:
    """The same spans as a protobuf body (string attributes only)."""
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.add(key="service.name").value.string_value = "svc"
    ss = rs.scope_spans.add()
    ss.scope.name = "s"
    for s in spans:
        sp = ss.spans.add(
            trace_id=bytes.fromhex(s["traceId"]),
            span_id=bytes.fromhex(s["spanId"]),
            name=s["name"],
            kind=s["kind"],
            start_time_unix_nano=int(s["startTimeUnixNano"]),
            end_time_unix_nano=int(s["endTimeUnixNano"]),
        )
        for a in s["attributes"]:
            sp.attributes.add(key=a["key"]).value.string_value = a["value"]["stringValue"]
        for e in s.get("events", []):
            pe = sp.events.add(name=e["name"])
            for a in e["attributes"]:
                pe.attributes.add(key=a["key"]).value.string_value = a["value"]["stringValue"]
    return req.SerializeToString()


def test_a_decoded_chunk_crosses_processes_without_its_python_lists() -> None:
    """``Decoded.columns`` serves the decoding process; pickled (a worker's answer) it is left
    out and the Arrow batches, skips and counts arrive whole."""
    d = _decode("otlp_json", [_line(_span("0000000000000001", "a")), b"{"])
    cols = Columns(1, 1)
    cols.cols["span_id"].append("0000000000000001")
    d = replace(d, columns=cols)
    back = pickle.loads(pickle.dumps(d))
    assert back.columns is None
    assert back.spans.equals(d.spans) and back.facts.equals(d.facts)
    assert back.records == 2
    assert back.skipped == d.skipped and [no for no, _ in d.skipped] == [3]
