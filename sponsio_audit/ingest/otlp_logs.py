"""OTLP logs (``ExportLogsServiceRequest`` / ``LogsData``, JSON and protobuf) → GenAI log rows.

The official OpenTelemetry OpenAI instrumentation records message content as
log records, not on the span (CONVENTIONS.md, "What real instrumentations
emit"): ``gen_ai.system.message``, ``gen_ai.user.message``,
``gen_ai.assistant.message``, ``gen_ai.tool.message`` (the input, one record
per message, body ``{content, tool_calls, id}``), ``gen_ai.choice`` (the output,
body ``{index, finish_reason, message}``) and, in the current conventions,
``gen_ai.client.inference.operation.details`` (``gen_ai.input.messages`` etc. as
attributes). Each carries its span's trace and span id.

``request_logs`` keeps those records as rows (``LogRow``) for the ``span_logs``
table; other records (no GenAI event name, no trace or span id) are only
counted. ``log_facts`` turns the records of one span into the facts the span
attributes would give (``conventions.span_facts``), so ``pipeline`` can fill
the span's unrecorded fields from them. The event name is the record's
``eventName`` (OTLP ≥ 1.5), else its ``event.name`` attribute (older SDKs).

Without content capture the records are there but empty (``{}`` bodies, tool
calls with a name and no ``arguments``): then the prompt and the output are
*missing*, not empty, while requested tool names are still known.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from sponsio_audit.ingest.conventions import FACT_FIELDS, span_facts
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.payloads import TOOL_FINISH
from sponsio_audit.ingest.values import (
    dumps,
    json_any,
    json_attrs,
    norm_id,
    parse,
    pb_any,
    pb_attrs,
    to_int,
)

GENAI_LOGS = frozenset(
    {
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
        "gen_ai.client.inference.operation.details",
    }
)
"""Log record event names attached to their spans; others are counted and skipped."""

DETAILS = "gen_ai.client.inference.operation.details"
_DETAIL_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")
_PROMPT, _CONTENT, _REQUESTED = (FACT_FIELDS.index(k) for k in ("prompt", "content", "requested"))
_SYSTEM, _WANTS = FACT_FIELDS.index("system_prompt"), FACT_FIELDS.index("wants_tools")
_RESULTS = FACT_FIELDS.index("results")

LogRow = tuple[str, str, str, int | None, str, str]
"""trace_id, span_id, event name, time (ns), body as JSON text, attributes as JSON text."""


def _no_logs(total: int) -> BadRecord:
    if not total:
        return BadRecord("OTLP logs with no log records")
    return BadRecord(
        f"OTLP logs: none of its {total} log records is a GenAI event with trace and span id"
    )


def json_request_logs(doc: Any) -> list[LogRow]:
    """The GenAI log records of one OTLP/JSON logs request (BadRecord when it has none)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceLogs"), list):
        raise BadRecord("resourceLogs is not a list")
    out: list[LogRow] = []
    total = 0
    for rl in doc["resourceLogs"]:
        scopes = rl.get("scopeLogs") if isinstance(rl, dict) else None
        for sl in scopes if isinstance(scopes, list) else []:
            recs = sl.get("logRecords") if isinstance(sl, dict) else None
            for lr in recs if isinstance(recs, list) else []:
                total += 1
                if not isinstance(lr, dict):
                    continue
                attrs = json_attrs(lr.get("attributes"))
                name = lr.get("eventName") or attrs.get("event.name")
                tid, sid = norm_id(lr.get("traceId")), norm_id(lr.get("spanId"))
                if name not in GENAI_LOGS or not tid or not sid:
                    continue
                t = to_int(lr.get("timeUnixNano")) or to_int(lr.get("observedTimeUnixNano"))
                body = json_any(lr.get("body"))
                out.append((tid, sid, name, t, dumps(body), dumps(attrs)))
    if not out:
        raise _no_logs(total)
    return out


def proto_request_logs(data: bytes) -> list[LogRow]:
    """The GenAI log records of one protobuf logs request body (BadRecord when it has none)."""
    req = ExportLogsServiceRequest()
    try:
        req.ParseFromString(data)
    except (DecodeError, RecursionError, ValueError) as e:
        raise BadRecord(f"invalid OTLP protobuf: {str(e)[:200]}") from None
    out: list[LogRow] = []
    total = 0
    for rl in req.resource_logs:
        for sl in rl.scope_logs:
            for lr in sl.log_records:
                total += 1
                attrs = pb_attrs(lr.attributes)
                name = lr.event_name or attrs.get("event.name")
                if name not in GENAI_LOGS or not lr.trace_id or not lr.span_id:
                    continue
                t = lr.time_unix_nano or lr.observed_time_unix_nano or None
                body = pb_any(lr.body) if lr.HasField("body") else None
                out.append(
                    (lr.trace_id.hex(), lr.span_id.hex(), name, t, dumps(body), dumps(attrs))
                )
    if not out:
        raise _no_logs(total)
    return out


def _has_args(msg: dict[str, Any]) -> bool:
    calls = msg.get("tool_calls")
    if not isinstance(calls, list):
        return False
    for c in calls:
        fn = c.get("function") if isinstance(c, dict) else None
        if isinstance(fn, dict) and "arguments" in fn:
            return True
    return False


def log_attrs(records: list[tuple[str, Any, dict[str, Any]]]) -> tuple[dict[str, Any], bool, bool]:
    """Span attributes equivalent to one span's GenAI log records (in order), and whether
    the input and the output content were recorded."""
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat"}
    inputs: list[dict[str, Any]] = []
    outputs: list[tuple[int, int, dict[str, Any]]] = []
    seen_in = seen_out = False
    reasons: list[str] = []
    for name, body, battrs in records:
        if name == DETAILS:
            for k in _DETAIL_KEYS:
                v = battrs.get(k)
                if v is None and isinstance(body, dict):
                    v = body.get(k)
                if v is not None and k not in attrs:
                    attrs[k] = v
                    seen_in = seen_in or k != "gen_ai.output.messages"
                    seen_out = seen_out or k == "gen_ai.output.messages"
            continue
        b: dict[str, Any] = body if isinstance(body, dict) else {}
        if body is not None and not isinstance(body, dict):
            b = {"content": body}
        if name == "gen_ai.choice":
            m = b.get("message")
            msg: dict[str, Any] = dict(m) if isinstance(m, dict) else {}
            msg.setdefault("role", "assistant")
            seen_out = seen_out or "content" in msg or _has_args(msg)
            idx = to_int(b.get("index")) or 0
            outputs.append((idx, len(outputs), msg))
            fr = b.get("finish_reason")
            if isinstance(fr, str):
                reasons.append(fr)
            continue
        role = name.split(".")[1]
        seen_in = seen_in or "content" in b or _has_args(b)
        inputs.append({**b, "role": role})
    if inputs and "gen_ai.input.messages" not in attrs:
        attrs["gen_ai.input.messages"] = inputs
    if outputs and "gen_ai.output.messages" not in attrs:
        attrs["gen_ai.output.messages"] = [m for _, _, m in sorted(outputs, key=lambda t: t[:2])]
    if reasons:
        attrs["gen_ai.response.finish_reasons"] = reasons
    return attrs, seen_in, seen_out


def log_facts(name: str, rows: list[tuple[str, str, str]]) -> tuple:
    """Facts (``FACT_FIELDS``) that a span's GenAI log records (event name, body JSON,
    attributes JSON; in order) give; unrecorded content stays None."""
    records = [(ev, parse(body), parse(a)) for ev, body, a in rows]
    attrs, seen_in, seen_out = log_attrs(records)
    f = list(span_facts(name, attrs))
    if not seen_in:
        f[_PROMPT] = f[_SYSTEM] = f[_RESULTS] = None
    if not seen_out:
        f[_CONTENT] = None
    reasons = attrs.get("gen_ai.response.finish_reasons", ())
    if reasons:
        f[_WANTS] = "1" if any(r in TOOL_FINISH for r in reasons) else "0"
    return tuple(f)
