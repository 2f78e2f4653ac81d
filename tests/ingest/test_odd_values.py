"""Property: any value type under any convention key maps to facts and events, never an error.

Attribute values come from untrusted spans. A decoder hands ``span_facts``
strings, ints, bools, floats (non-finite ones spelled as strings), lists and
maps (kvlist); an instrumentation may put any of them under any key. An
exception there would cost the whole request (the record's safety net skips
it), so every convention must read an unexpected type as "not this value".
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest.conventions import FACT_FIELDS, span_facts
from sponsio_audit.ingest.trace_events import ROW_FIELDS, trace_events
from sponsio_audit.ingest.values import dumps

KEYS = (
    "gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.conversation.id",
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
    "gen_ai.prompt", "gen_ai.completion", "gen_ai.prompt.0.content", "gen_ai.prompt.0.role",
    "gen_ai.prompt.1.tool_calls.0.name", "gen_ai.completion.0.content",
    "gen_ai.completion.0.tool_calls.0.arguments", "gen_ai.tool.name",
    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens", "gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens",
    "gen_ai.usage.total_tokens", "llm.usage.total_tokens", "traceloop.span.kind",
    "traceloop.entity.name", "traceloop.entity.input", "traceloop.entity.output",
    "openinference.span.kind", "tool.name", "input.value", "output.value", "agent.name",
    "llm.input_messages.0.message.role", "llm.input_messages.0.message.content",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total",
    "session.id", "sponsio.agent_id", "sponsio.conversation_id", "sponsio.event.type",
    "sponsio.event.tool", "sponsio.event.tool_args", "sponsio.contract.id",
    "sponsio.contract.label", "sponsio.enforcement.action", "sponsio.violation.evidence",
)  # fmt: skip

# values a kind-specific key is often compared with, so that branches are taken
KNOWN = st.sampled_from(
    ["chat", "execute_tool", "invoke_agent", "tool", "agent", "TOOL", "LLM", "AGENT",
     "text_completion", "tool_call", '{"a": 1}', '[{"role": "user", "content": "x"}]', "12"]
)  # fmt: skip
scalar = st.one_of(
    st.none(), st.text(max_size=6), KNOWN, st.integers(-(2**63), 2**63 - 1), st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(["nan", "inf", "-inf"]),
)  # fmt: skip
value = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
names = st.sampled_from(
    ["chat x", "execute_tool t", "invoke_agent a", "sponsio.agent_turn",
     "sponsio.contract_check", "sponsio.enforcement", "sponsio.violation", "span"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(names, st.dictionaries(st.sampled_from(KEYS), value, max_size=6)),
        min_size=1,
        max_size=4,
    )
)
def test_any_value_under_any_convention_key_maps_without_error(
    spans: list[tuple[str, dict[str, Any]]],
) -> None:
    rows = []
    for i, (name, attrs) in enumerate(spans):
        facts = span_facts(name, attrs)
        assert len(facts) == len(FACT_FIELDS)
        for field, v in zip(FACT_FIELDS, facts, strict=True):  # what the store's columns take
            if field == "agent_scope":
                assert v is None or isinstance(v, bool)
            elif field.startswith("tokens_"):
                assert v is None or type(v) is int
            else:
                assert v is None or isinstance(v, str), (field, v)
        dumps(attrs)  # the spans table's attributes column
        parent = f"{i - 1:016x}" if i else None
        rows.append(("t", f"{i:016x}", parent, 1, 1, i, i, i + 1, "svc", *facts))
        assert len(rows[-1]) == len(ROW_FIELDS)
    events: list[tuple] = []
    trace_events("t", rows, events.append, lambda d: None)
    for e in events:
        assert e[0] == "t" and isinstance(e[3], str)
