"""The enum names stored in ``spans`` and the span events read as attributes, shared by the
OTLP decoders (which append a span's values to ``columns.Columns``)."""

from __future__ import annotations

KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS = ("UNSET", "OK", "ERROR")

GENAI_EVENTS = frozenset(
    {
        "gen_ai.content.prompt",  # deprecated: gen_ai.prompt on an event
        "gen_ai.content.completion",  # deprecated: gen_ai.completion on an event
        "gen_ai.client.inference.operation.details",  # current: messages on an event
    }
)
"""Span events whose attributes count as the span's own for the conventions
(span attributes win); other span events and links are not read."""
