"""OTLP export against a real HTTP server on 127.0.0.1: tree, attributes, redaction, JSON, drops."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sponsio_audit.guard import Guard, OtlpHttpExporter
from sponsio_audit.guard import semconv as sc

from .helpers import contract

PRECEDE = "G(called(pay) -> O called(verify))"


class Collector:
    """Requests received: (path, headers, body); answers ``statuses`` in turn, then 200."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.statuses = list(statuses or [])
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                code = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.close()


def attrs(kvs: Any) -> dict[str, Any]:
    out = {}
    for kv in kvs:
        v = kv.value
        out[kv.key] = getattr(v, v.WhichOneof("value"))
    return out


def run_session(exporter: OtlpHttpExporter) -> Guard:
    cs = [contract("p", PRECEDE), contract("w", "G(!called(ls))", strategy="warn")]
    g = Guard(cs, "bot", session_log=False, exporter=exporter)
    g.guard_before("pay", {"amount": 3, "password": "hunter2", "note": "y" * 5000})
    g.guard_before("verify", {})
    g.guard_before("ls", {"token": "AKIAIOSFODNN7EXAMPLE"})
    g.finish()
    return g


def test_protobuf_tree_and_attributes(collector: Collector, tmp_path: Path) -> None:
    exp = OtlpHttpExporter(collector.url, service_name="svc", headers={"x-api": "k"})
    run_session(exp)
    exp.shutdown()
    assert collector.requests, "nothing exported"
    path, headers, _ = collector.requests[0]
    assert path == "/v1/traces" and headers["content-type"] == "application/x-protobuf"
    assert headers["x-api"] == "k"
    body = b"".join(r[2] for r in collector.requests[:1])
    (tmp_path / "otlp_capture.bin").write_bytes(body)  # kept for the scanner tests
    spans = []
    for _, _, b in collector.requests:
        req = ExportTraceServiceRequest.FromString(b)
        for rs in req.resource_spans:
            assert rs.schema_url == sc.SCHEMA_URL
            assert attrs(rs.resource.attributes)["service.name"] == "svc"
            for ss in rs.scope_spans:
                assert ss.schema_url == sc.SCHEMA_URL
                spans += list(ss.spans)
    assert exp.sent == len(spans) and exp.dropped == 0
    by_id = {s.span_id: s for s in spans}
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 3 and all(s.name == sc.SPAN_AGENT_TURN for s in roots)
    for s in spans:
        assert len(s.trace_id) == 16 and len(s.span_id) == 8
        assert s.start_time_unix_nano > 1_600_000_000 * 10**9
        assert s.end_time_unix_nano >= s.start_time_unix_nano
        if s.parent_span_id:
            parent = by_id[s.parent_span_id]
            assert parent.trace_id == s.trace_id
            want = (
                sc.SPAN_AGENT_TURN if s.name == sc.SPAN_CONTRACT_CHECK else sc.SPAN_CONTRACT_CHECK
            )
            assert parent.name == want
    # one Guard session, one trace id for every span it exports (SEMANTICS.md §4.2)
    assert len({s.trace_id for s in spans}) == 1
    pay = next(s for s in roots if attrs(s.attributes)[sc.EVENT_TOOL] == "pay")
    a = attrs(pay.attributes)
    assert a[sc.OUTCOME_BLOCKED] is True and a[sc.OUTCOME_STATUS] == "violated"
    assert a[sc.AGENT_ID] == "bot" and a[sc.CONTRACTS_CHECKED] == 2
    args = a[sc.EVENT_TOOL_ARGS]
    assert '"password":"<redacted>"' in args and "hunter2" not in args
    assert args.endswith(" B truncated)") and len(args.encode()) < 4096 + 40
    ls = next(s for s in roots if attrs(s.attributes)[sc.EVENT_TOOL] == "ls")
    assert "AKIA" not in attrs(ls.attributes)[sc.EVENT_TOOL_ARGS]

    def root_of(s: Any) -> Any:
        while s.parent_span_id:
            s = by_id[s.parent_span_id]
        return s

    kids = [s for s in spans if root_of(s) is pay]
    names = sorted(s.name for s in kids)
    assert names.count(sc.SPAN_CONTRACT_CHECK) == 2 and names.count(sc.SPAN_GUARANTEE) == 2
    viol = next(s for s in kids if s.name == sc.SPAN_VIOLATION)
    va = attrs(viol.attributes)
    assert va[sc.VIOLATION_KIND] == "guarantee" and va[sc.VIOLATION_SEVERITY] == "HIGH"
    enf = attrs(next(s for s in kids if s.name == sc.SPAN_ENFORCEMENT).attributes)
    assert enf == {sc.ENFORCEMENT_STRATEGY: "DetBlock", sc.ENFORCEMENT_ACTION: "blocked"}
    guar = [attrs(s.attributes) for s in kids if s.name == sc.SPAN_GUARANTEE]
    assert {g[sc.CONSTRAINT_RESULT] for g in guar} == {"ok", "violated"}
    ws = [attrs(s.attributes) for s in spans if s.name == sc.SPAN_ENFORCEMENT]
    assert {sc.ENFORCEMENT_STRATEGY: "WarnOnly", sc.ENFORCEMENT_ACTION: "warned"} in ws


def test_opt_out_of_redaction_and_truncation(collector: Collector) -> None:
    exp = OtlpHttpExporter(collector.url, redact_args=False, truncate=False)
    run_session(exp)
    exp.shutdown()
    req = ExportTraceServiceRequest.FromString(collector.requests[0][2])
    spans = [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
    args = [attrs(s.attributes).get(sc.EVENT_TOOL_ARGS, "") for s in spans]
    assert any("hunter2" in a and "truncated" not in a for a in args)


def test_json_from_environment(collector: Collector, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-one=1,x-two=a%20b")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    g = Guard([contract("p", PRECEDE)], "bot", session_log=False)
    assert g.exporter is not None
    g.guard_before("pay", {"secret": "s"})
    g.finish()
    g.close()
    path, headers, body = collector.requests[0]
    assert path == "/v1/traces" and headers["content-type"] == "application/json"
    assert headers["x-one"] == "1" and headers["x-two"] == "a b"
    doc = json.loads(body)
    rs = doc["resourceSpans"][0]
    assert rs["schemaUrl"] == sc.SCHEMA_URL
    assert rs["scopeSpans"][0]["schemaUrl"] == sc.SCHEMA_URL
    assert {"key": "service.name", "value": {"stringValue": "from-env"}} in rs["resource"][
        "attributes"
    ]
    spans = rs["scopeSpans"][0]["spans"]
    ids = {s["spanId"] for s in spans}
    for s in spans:
        assert len(s["traceId"]) == 32 and len(s["spanId"]) == 16
        int(s["traceId"], 16), int(s["spanId"], 16)
        assert isinstance(s["startTimeUnixNano"], str) and s["kind"] == 1
        assert s.get("parentSpanId", "") in ids | {""}
    root = next(s for s in spans if "parentSpanId" not in s)
    args = next(a for a in root["attributes"] if a["key"] == sc.EVENT_TOOL_ARGS)
    assert args["value"]["stringValue"] == '{"secret":"<redacted>"}'
    n = next(a for a in root["attributes"] if a["key"] == sc.CONTRACTS_CHECKED)
    assert n["value"] == {"intValue": "1"}


def test_retries_on_503_then_succeeds() -> None:
    c = Collector(statuses=[503, 429])
    try:
        exp = OtlpHttpExporter(c.url, backoff=0.01)
        run_session(exp)
        exp.shutdown()
        assert exp.retries >= 2 and exp.sent > 0 and exp.failed == 0
    finally:
        c.close()


def test_dead_endpoint_never_blocks_and_counts_drops() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    exp = OtlpHttpExporter(f"http://127.0.0.1:{port}", max_queue=4, backoff=0.05, max_retries=3)
    g = Guard([contract("p", PRECEDE)], "bot", session_log=False, exporter=exp)
    worst = 0.0
    for i in range(200):
        t0 = time.perf_counter()
        g.guard_before("pay" if i % 2 else "verify", {"i": i})
        worst = max(worst, time.perf_counter() - t0)
    assert worst < 0.05, worst
    assert exp.dropped > 0
    t0 = time.perf_counter()
    exp.shutdown(timeout=0.5)
    assert time.perf_counter() - t0 < 3.0
