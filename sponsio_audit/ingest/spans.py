"""The span tuple shared by the OTLP decoders, and the enum names stored in ``spans``."""

from __future__ import annotations

from typing import Any

KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS = ("UNSET", "OK", "ERROR")

SpanTuple = tuple[
    str,  # trace_id (lower-case hex, or the opaque JSON string)
    str | None,  # span_id
    str | None,  # parent_span_id
    str,  # name
    str,  # kind name
    int | None,  # start_ns
    int | None,  # end_ns
    str,  # status: code name, then ": message" when one was recorded
    str | None,  # service.name of the resource
    str | None,  # scope name
    dict[str, Any],  # attributes (capped plain values)
    str,  # resource attributes as compact JSON
    dict[str, Any] | None,  # attributes of GenAI span events (``GENAI_EVENTS``), or None
]

GENAI_EVENTS = frozenset(
    {
        "gen_ai.content.prompt",  # deprecated: gen_ai.prompt on an event
        "gen_ai.content.completion",  # deprecated: gen_ai.completion on an event
        "gen_ai.client.inference.operation.details",  # current: messages on an event
    }
)
"""Span events whose attributes count as the span's own for the conventions
(span attributes win); other span events and links are not read."""
