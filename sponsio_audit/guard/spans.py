"""The ``sponsio.*`` span tree of one guard check, and its OTLP encodings.

One ``Turn`` (a decision with its per-contract details) becomes::

    sponsio.agent_turn                 root, one per check
    └── sponsio.contract_check         one per contract evaluated
        ├── sponsio.precondition       when the contract has assumptions
        ├── sponsio.guarantee          one per guarantee
        ├── sponsio.violation          one per failed clause
        └── sponsio.enforcement        when the contract's strategy fired

Ids are random (16-byte trace id, 8-byte span ids, from ``os.urandom``),
times are the check's real start and end. Tool args are redacted and
truncated to 4 KB unless the exporter opts out. ``to_protobuf`` builds an
``ExportTraceServiceRequest`` with the ``opentelemetry-proto`` message
classes (no OTel SDK); ``to_json`` writes OTLP/JSON (hex ids, enums as
integers, 64-bit integers as decimal strings).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from sponsio_audit.guard import semconv as sc
from sponsio_audit.guard.strategies import Decision, Violation
from sponsio_audit.redact import args_json, truncate

KIND_INTERNAL = 1
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2

AttrValue = str | bool | int | float


@dataclass(frozen=True)
class ContractCheck:
    """What one contract said about one check."""

    contract_id: str
    label: str = ""
    source: str | None = None
    assumptions: tuple[str, ...] = ()
    assumption_holds: bool = True
    guarantees: tuple[tuple[str, bool], ...] = ()  # (formula text, violated now)
    violations: tuple[Violation, ...] = ()
    eval_pos: int = 0


@dataclass(frozen=True)
class Turn:
    """One check (a ``guard_before``, a post-hoc ``guard_after`` or the session end)."""

    decision: Decision
    agent_id: str
    contracts: tuple[ContractCheck, ...] = ()
    conversation_id: str | None = None
    event_type: str = "tool_call"
    raw_args: Any = None  # the unredacted args, for exporters that opt out of redaction


@dataclass
class Span:
    """A span ready for encoding."""

    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, AttrValue] = field(default_factory=dict)
    status: int = STATUS_UNSET
    status_message: str = ""


def _severity(s: str) -> str:
    return s.upper()


def build(turn: Turn, *, redact_args: bool = True, truncate_args: bool = True) -> list[Span]:
    """The span tree of ``turn``, root first (module doc)."""
    d = turn.decision
    trace_id = os.urandom(16)
    start, end = d.start_ns, max(d.end_ns, d.start_ns)
    root_id = os.urandom(8)
    n_viol = len(d.violations)
    blocked = not d.appended and d.mode == "enforce"
    root_attrs: dict[str, AttrValue] = {
        sc.AGENT_ID: turn.agent_id,
        sc.EVENT_TYPE: turn.event_type,
        sc.OUTCOME_BLOCKED: blocked,
        sc.OUTCOME_STATUS: "violated" if n_viol else "ok",
        sc.CONTRACTS_CHECKED: len(turn.contracts),
        sc.DET_VIOLATIONS: n_viol,
        sc.TURN_DURATION_NS: end - start,
    }
    if d.tool is not None:
        root_attrs[sc.EVENT_TOOL] = d.tool
    args = turn.raw_args if turn.raw_args is not None else d.args
    if args is not None:
        root_attrs[sc.EVENT_TOOL_ARGS] = args_json(
            args, redact=redact_args, limit=sc.ARGS_LIMIT if truncate_args else None
        )
    if turn.conversation_id:
        root_attrs[sc.CONVERSATION_ID] = turn.conversation_id
    spans = [Span(trace_id, root_id, b"", sc.SPAN_AGENT_TURN, start, end, root_attrs)]
    for c in turn.contracts:
        cid = os.urandom(8)
        holds = not any(v.kind != "assumption" for v in c.violations)
        spans.append(
            Span(
                trace_id,
                cid,
                root_id,
                sc.SPAN_CONTRACT_CHECK,
                start,
                end,
                {
                    sc.CONTRACT_ID: c.contract_id,
                    sc.CONTRACT_LABEL: c.label,
                    sc.CONTRACT_SOURCE: c.source or "user_policy",
                    sc.CONTRACT_ASSUMPTION_HOLDS: c.assumption_holds,
                    sc.CONTRACT_ENFORCEMENT_HOLDS: holds,
                },
            )
        )
        phases = [(sc.SPAN_PRECONDITION, t, not c.assumption_holds) for t in c.assumptions]
        phases += [(sc.SPAN_GUARANTEE, t, bad) for t, bad in c.guarantees]
        for name, text, bad in phases:
            spans.append(
                Span(
                    trace_id,
                    os.urandom(8),
                    cid,
                    name,
                    start,
                    end,
                    {
                        sc.CONSTRAINT_DESC: text,
                        sc.CONSTRAINT_FORMULA: text,
                        sc.CONSTRAINT_RESULT: "violated" if bad else "ok",
                        sc.CONSTRAINT_FRESH: bad,
                        sc.CONSTRAINT_EVAL_POS: c.eval_pos,
                    },
                )
            )
        for v in c.violations:
            spans.append(
                Span(
                    trace_id,
                    os.urandom(8),
                    cid,
                    sc.SPAN_VIOLATION,
                    start,
                    end,
                    {
                        sc.VIOLATION_KIND: v.kind,
                        sc.VIOLATION_SEVERITY: _severity(v.severity),
                        sc.VIOLATION_EVIDENCE: truncate(v.message, sc.ARGS_LIMIT),
                    },
                    STATUS_ERROR,
                    v.kind + " violated",
                )
            )
        if c.violations:
            v = c.violations[0]
            action = d.action if d.mode == "enforce" else "observed"
            attrs: dict[str, AttrValue] = {
                sc.ENFORCEMENT_STRATEGY: sc.STRATEGY_NAMES.get(v.strategy, v.strategy),
                sc.ENFORCEMENT_ACTION: action if action != "allowed" else "warned",
            }
            if v.strategy == "redirect" and v.safe_tool:
                attrs[sc.ENFORCEMENT_FALLBACK_ACTION] = v.safe_tool
            spans.append(Span(trace_id, os.urandom(8), cid, sc.SPAN_ENFORCEMENT, start, end, attrs))
    return spans


# ---------------------------------------------------------------- encodings


def _resource_attrs(service_name: str) -> dict[str, AttrValue]:
    return {"service.name": service_name, "telemetry.sdk.name": "sponsio-audit"}


def to_protobuf(spans: list[Span], service_name: str) -> bytes:
    """``ExportTraceServiceRequest`` bytes for ``spans`` (schema URL on resource and scope)."""
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    from opentelemetry.proto.common.v1 import common_pb2
    from opentelemetry.proto.resource.v1 import resource_pb2
    from opentelemetry.proto.trace.v1 import trace_pb2

    def kv(k: str, v: AttrValue) -> common_pb2.KeyValue:
        if isinstance(v, bool):
            return common_pb2.KeyValue(key=k, value=common_pb2.AnyValue(bool_value=v))
        if isinstance(v, int):
            return common_pb2.KeyValue(key=k, value=common_pb2.AnyValue(int_value=v))
        if isinstance(v, float):
            return common_pb2.KeyValue(key=k, value=common_pb2.AnyValue(double_value=v))
        return common_pb2.KeyValue(key=k, value=common_pb2.AnyValue(string_value=str(v)))

    pb_spans = [
        trace_pb2.Span(
            trace_id=s.trace_id,
            span_id=s.span_id,
            parent_span_id=s.parent_id,
            name=s.name,
            kind=KIND_INTERNAL,  # type: ignore[arg-type]
            start_time_unix_nano=s.start_ns,
            end_time_unix_nano=s.end_ns,
            attributes=[kv(k, v) for k, v in s.attributes.items()],
            status=trace_pb2.Status(code=s.status, message=s.status_message),  # type: ignore[arg-type]
        )
        for s in spans
    ]
    req = trace_service_pb2.ExportTraceServiceRequest(
        resource_spans=[
            trace_pb2.ResourceSpans(
                resource=resource_pb2.Resource(
                    attributes=[kv(k, v) for k, v in _resource_attrs(service_name).items()]
                ),
                schema_url=sc.SCHEMA_URL,
                scope_spans=[
                    trace_pb2.ScopeSpans(
                        scope=common_pb2.InstrumentationScope(
                            name=sc.SCOPE_NAME, version=sc.SCHEMA_VERSION
                        ),
                        schema_url=sc.SCHEMA_URL,
                        spans=pb_spans,
                    )
                ],
            )
        ]
    )
    return req.SerializeToString()


def _json_value(v: AttrValue) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def _json_attrs(attrs: dict[str, AttrValue]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _json_value(v)} for k, v in attrs.items()]


def to_json(spans: list[Span], service_name: str) -> bytes:
    """OTLP/JSON of an ``ExportTraceServiceRequest`` for ``spans``."""
    out = []
    for s in spans:
        d: dict[str, Any] = {
            "traceId": s.trace_id.hex(),
            "spanId": s.span_id.hex(),
            "name": s.name,
            "kind": KIND_INTERNAL,
            "startTimeUnixNano": str(s.start_ns),
            "endTimeUnixNano": str(s.end_ns),
            "attributes": _json_attrs(s.attributes),
            "status": {
                "code": s.status,
                **({"message": s.status_message} if s.status_message else {}),
            },
        }
        if s.parent_id:
            d["parentSpanId"] = s.parent_id.hex()
        out.append(d)
    doc = {
        "resourceSpans": [
            {
                "resource": {"attributes": _json_attrs(_resource_attrs(service_name))},
                "schemaUrl": sc.SCHEMA_URL,
                "scopeSpans": [
                    {
                        "scope": {"name": sc.SCOPE_NAME, "version": sc.SCHEMA_VERSION},
                        "schemaUrl": sc.SCHEMA_URL,
                        "spans": out,
                    }
                ],
            }
        ]
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
