"""The conventions of CONVENTIONS.md ("Span → event") as one table: the registry ingest reads.

A row (``Convention``) is one thing a span can be under one convention: its
name, the role it gives (tool, llm, agent, or a Sponsio verdict span), how a
span is recognised (``When``), and per fact field where its value comes from,
in precedence order: attribute keys (``Pick``), a named function where the
value needs parsing (``Parse``: messages, tool arguments, results), or a sum
of two other fields (``Sum``). ``conventions.span_facts`` reads the rows.

Precedence, as CONVENTIONS.md says. Rows apply in table order and the first
that applies wins, **per field**: a field the winning row did not record is
taken from the next row of the same role that did (an ``execute_tool`` span
without ``gen_ai.tool.call.arguments`` takes its args from ``input.value``).
Inside a row, a field's sources are tried in the order listed, the first that
records a value (not None) wins.

To add a convention: add its rows here (and, only if a value needs parsing,
one function in ``payloads`` or ``messages``); ``sponsio-audit conventions``
lists the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from sponsio_audit.ingest import flat_messages as fm
from sponsio_audit.ingest import messages as m
from sponsio_audit.ingest import payloads as p

LLM_OPS = frozenset({"chat", "generate_content", "text_completion"})
"""GenAI operation names of an LLM call."""

OP = "gen_ai.operation.name"
AGENT = "gen_ai.agent.name"
CURRENT = ("gen_ai.input.messages", "gen_ai.output.messages")
INSTRUCTIONS = "gen_ai.system_instructions"
DEPRECATED = ("gen_ai.prompt", "gen_ai.completion")
INDEXED = ("gen_ai.prompt.0.content", "gen_ai.prompt.0.role")
CONVERSATION = ("gen_ai.conversation.id", "session.id", "sponsio.conversation_id")
"""Conversation id of every span, first recorded wins (and of spans no row applies to)."""


@dataclass(frozen=True)
class When:
    """One way a row applies: a selector (an attribute's value, or the span name) and
    keys that must or must not be present.

    ``key`` empty: no attribute selects; ``values`` None: any recorded (non-null)
    value; a None among ``values``: the attribute absent or null. Each group of
    ``has`` needs one of its keys present; no key of ``lacks`` may be present.
    """

    key: str = ""
    values: frozenset[str | None] | None = None
    names: frozenset[str] = frozenset()
    has: tuple[tuple[str, ...], ...] = ()
    lacks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pick:
    """``field`` from the first of ``keys``: ``"set"`` the first recorded (not None),
    ``"present"`` the first present (its value even if null), ``"truthy"`` the first
    non-empty, else ``name``: the span name (``"*"``), or the text after the prefix
    ``name`` (stripped) when the span name starts with it.

    Text fields are kept as text (other values as compact JSON), token counts as
    integers (None when not one).
    """

    field: str
    keys: tuple[str, ...]
    rule: Literal["set", "present", "truthy"] = "set"
    name: str | None = None


@dataclass(frozen=True)
class Parse:
    """Fields ``into`` from ``read`` of the values of ``keys`` (null when absent), called
    when the first key is present (``any_key``: when any is); or, with ``prefix``, of
    the attributes whose keys start with it, called when there is one."""

    read: Callable[..., tuple[Any, ...]]
    into: tuple[str, ...]
    keys: tuple[str, ...] = ()
    prefix: str = ""
    any_key: bool = False


@dataclass(frozen=True)
class Sum:
    """``field``, when not recorded, as ``a + b`` when both were (derived, documented)."""

    field: str
    a: str
    b: str


Source = Pick | Parse | Sum


@dataclass(frozen=True)
class Convention:
    """One row: under convention ``name`` a span recognised by any of ``when`` is a
    ``role`` span whose fields come from ``fields``; ``scope``: it opens an agent scope."""

    name: str
    role: str
    when: tuple[When, ...]
    fields: tuple[Source, ...]
    scope: bool = False
    doc: str = ""


def openllmetry_input(attrs: dict[str, Any]) -> tuple[Any, ...]:
    """``messages.input_fields`` of OpenLLMetry's indexed ``gen_ai.prompt.N.…``."""
    return m.input_fields(fm.openllmetry_items(attrs, "gen_ai.prompt."))


def openllmetry_output(attrs: dict[str, Any]) -> tuple[Any, ...]:
    """(content, requested, wants_tools) of OpenLLMetry's indexed ``gen_ai.completion.N.…``."""
    return m.output_fields(fm.openllmetry_items(attrs, "gen_ai.completion."))


def openinference_input_messages(attrs: dict[str, Any]) -> tuple[Any, ...]:
    """``messages.input_fields`` of OpenInference's ``llm.input_messages.N.message.…``."""
    return m.input_fields(fm.openinference_items(attrs, "llm.input_messages."))


def openinference_output_messages(attrs: dict[str, Any]) -> tuple[Any, ...]:
    """(content, requested, wants_tools) of OpenInference's ``llm.output_messages.N.…``."""
    return m.output_fields(fm.openinference_items(attrs, "llm.output_messages."))


_INPUT = ("prompt", "system_prompt", "results")
_OUTPUT = ("content", "requested", "wants_tools")
_TOOL_RESULT = ("content", "call_id")
FINISH = Parse(
    p.finish,
    ("wants_tools",),
    ("gen_ai.response.finish_reasons", "llm.finish_reason", "gen_ai.completion.0.finish_reason"),
    any_key=True,
)
"""Finish reasons (any convention's key): after the output messages, which say "1" first
when a requested call had no name."""
AGENT_NAME = Pick("agent", (AGENT,))
OPENLLMETRY_LLM = (
    AGENT_NAME,
    Parse(openllmetry_input, _INPUT, prefix="gen_ai.prompt."),
    Parse(openllmetry_output, _OUTPUT, prefix="gen_ai.completion."),
    FINISH,
    Pick("tokens_in", ("gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens"), "present"),
    Pick("tokens_out", ("gen_ai.usage.completion_tokens", "gen_ai.usage.output_tokens"), "present"),
    Pick("tokens_total", ("llm.usage.total_tokens",)),
    Sum("tokens_total", "tokens_in", "tokens_out"),
)
"""The OpenLLMetry (Traceloop) LLM row's fields: indexed ``gen_ai.prompt.N.…`` messages."""


def _llm(name: str, inp: str, out: str, instructions: bool) -> tuple[Source, ...]:
    """Fields of a GenAI LLM row whose messages are the attributes ``inp`` and ``out``."""
    reads: tuple[Source, ...] = (
        Parse(m.input_fields, _INPUT, (inp, INSTRUCTIONS) if instructions else (inp,)),
    )
    if instructions:
        reads += (Parse(m.system_fields, ("system_prompt",), (INSTRUCTIONS,)),)
    return (
        AGENT_NAME,
        *reads,
        Parse(m.output_fields, _OUTPUT, (out,)),
        FINISH,
        Pick("tokens_in", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"), "present"),
        Pick(
            "tokens_out",
            ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
            "present",
        ),
        Pick("tokens_total", ("gen_ai.usage.total_tokens", "llm.usage.total_tokens"), "present"),
        Sum("tokens_total", "tokens_in", "tokens_out"),
    )


CONVENTIONS: tuple[Convention, ...] = (
    Convention(
        "gen_ai",
        "tool",
        (When(OP, frozenset({"execute_tool"})),),
        (
            AGENT_NAME,
            Pick("tool", ("gen_ai.tool.name",), "truthy", name="execute_tool"),
            Pick("call_id", ("gen_ai.tool.call.id",)),
            Parse(p.tool_args, ("args", "call_id"), ("gen_ai.tool.call.arguments",)),
            Parse(p.tool_result, _TOOL_RESULT, ("gen_ai.tool.call.result",)),
        ),
        doc="OTel GenAI execute_tool span",
    ),
    Convention(
        "gen_ai",
        "agent",
        (When(OP, frozenset({"invoke_agent"})),),
        (Pick("agent", (AGENT,), "truthy", name="invoke_agent"),),
        scope=True,
        doc="OTel GenAI invoke_agent span",
    ),
    Convention(
        "gen_ai",
        "llm",
        (
            When(OP, LLM_OPS, has=((*CURRENT, INSTRUCTIONS),)),
            When(OP, LLM_OPS, lacks=(*DEPRECATED, *INDEXED)),
            When(OP, has=(CURRENT,)),
            When(OP, frozenset({None}), has=(DEPRECATED, (*CURRENT, INSTRUCTIONS))),
        ),
        _llm("gen_ai", CURRENT[0], CURRENT[1], instructions=True),
        doc="OTel GenAI LLM call: gen_ai.input/output.messages, gen_ai.system_instructions",
    ),
    Convention(
        "gen_ai_deprecated",
        "llm",
        (When(OP, LLM_OPS | {None}, has=(DEPRECATED,), lacks=(*CURRENT, INSTRUCTIONS)),),
        _llm("gen_ai_deprecated", DEPRECATED[0], DEPRECATED[1], instructions=False),
        doc="deprecated OTel GenAI LLM call: gen_ai.prompt, gen_ai.completion",
    ),
    Convention(
        "openllmetry",
        "llm",
        (When(OP, LLM_OPS, has=(INDEXED,), lacks=(*CURRENT, INSTRUCTIONS, *DEPRECATED)),),
        OPENLLMETRY_LLM,
        doc="GenAI LLM operation whose messages are indexed gen_ai.prompt.N.* (before Traceloop)",
    ),
    Convention(
        "openllmetry",
        "tool",
        (When("traceloop.span.kind", frozenset({"tool"})),),
        (
            AGENT_NAME,
            Pick("tool", ("traceloop.entity.name",), "truthy", name="*"),
            Parse(p.traceloop_input, ("args", "call_id"), ("traceloop.entity.input",)),
            Parse(p.traceloop_output, _TOOL_RESULT, ("traceloop.entity.output",)),
        ),
        doc="OpenLLMetry (Traceloop) tool span",
    ),
    Convention(
        "openllmetry",
        "agent",
        (When("traceloop.span.kind", frozenset({"agent"})),),
        (Pick("agent", (AGENT, "traceloop.entity.name"), "truthy", name="*"),),
        scope=True,
        doc="OpenLLMetry (Traceloop) agent span",
    ),
    Convention(
        "openllmetry",
        "llm",
        (When(has=(INDEXED,)),),
        OPENLLMETRY_LLM,
        doc="OpenLLMetry LLM call: indexed gen_ai.prompt.N.*, gen_ai.completion.N.*",
    ),
    Convention(
        "openinference",
        "tool",
        (When("openinference.span.kind", frozenset({"TOOL"})),),
        (
            AGENT_NAME,
            Pick("tool", ("tool.name",), "truthy", name="*"),
            Parse(p.openinference_input, ("args", "bare"), ("input.value", "tool.parameters")),
            Parse(p.tool_result, _TOOL_RESULT, ("output.value",)),
        ),
        doc="OpenInference TOOL span",
    ),
    Convention(
        "openinference",
        "llm",
        (When("openinference.span.kind", frozenset({"LLM"})),),
        (
            AGENT_NAME,
            Parse(openinference_input_messages, _INPUT, prefix="llm.input_messages."),
            Parse(openinference_output_messages, _OUTPUT, prefix="llm.output_messages."),
            FINISH,
            Pick("tokens_in", ("llm.token_count.prompt",)),
            Pick("tokens_out", ("llm.token_count.completion",)),
            Pick("tokens_total", ("llm.token_count.total",)),
            Sum("tokens_total", "tokens_in", "tokens_out"),
        ),
        doc="OpenInference LLM span: llm.input_messages.N.*, llm.output_messages.N.*",
    ),
    Convention(
        "openinference",
        "agent",
        (When("openinference.span.kind", frozenset({"AGENT"})),),
        (Pick("agent", (AGENT, "agent.name"), "truthy", name="*"),),
        scope=True,
        doc="OpenInference AGENT span",
    ),
    Convention(
        "sponsio",
        "turn",
        (When(names=frozenset({"sponsio.agent_turn"})),),
        (
            Pick("agent", ("sponsio.agent_id",)),
            Pick("tool", ("sponsio.event.tool",)),
            Parse(p.turn_args, ("args",), ("sponsio.event.tool_args",)),
            Parse(
                p.turn_type,
                ("event_type",),
                ("sponsio.event.type", "sponsio.outcome.blocked"),
                any_key=True,
            ),
        ),
        scope=True,
        doc="Sponsio guard turn (schema 1.0.0)",
    ),
    *(
        Convention(
            "sponsio",
            role,
            (When(names=frozenset({span})),),
            (
                Pick("agent", ("sponsio.agent_id",)),
                Pick("contract_id", ("sponsio.contract.id",)),
                Pick("result", ("sponsio.enforcement.action",)),
                Pick("message", (message,)),
            ),
            doc=f"Sponsio {span} span",
        )
        for span, role, message in (
            ("sponsio.contract_check", "check", "sponsio.contract.label"),
            ("sponsio.enforcement", "enforce", "sponsio.contract.label"),
            ("sponsio.violation", "violation", "sponsio.violation.evidence"),
        )
    ),
)
"""The registry: every convention row, in precedence order."""


def when_text(w: When) -> str:
    """One way a row applies, as a line of text (``sponsio-audit conventions``)."""
    out = []
    if w.names:
        out.append(f"span name {_one_of(w.names)}")
    elif w.key and w.values is None:
        out.append(f"{w.key} recorded")
    elif w.key and w.values is not None:
        named = {v for v in w.values if v is not None}
        choice = [_one_of(frozenset(named))] if named else []
        out.append(f"{w.key} " + " or ".join(choice + (["absent"] if None in w.values else [])))
    out += [f"has {' or '.join(group)}" for group in w.has]
    out += [f"lacks {' and '.join(w.lacks)}"] if w.lacks else []
    return ", ".join(out)


def _one_of(values: frozenset[str]) -> str:
    return f"= {next(iter(values))}" if len(values) == 1 else f"in {{{', '.join(sorted(values))}}}"


def source_text(src: Source) -> str:
    """Where a field comes from, as a line of text (``sponsio-audit conventions``)."""
    match src:
        case Pick():
            rule = {
                "set": "first recorded",
                "present": "first present",
                "truthy": "first non-empty",
            }
            keys = " > ".join(src.keys)
            text = f"{src.field} <- {keys}" + (f" ({rule[src.rule]})" if len(src.keys) > 1 else "")
            if src.name == "*":
                text += ", else the span name"
            elif src.name is not None:
                text += f", else the span name after {src.name!r}"
            return text
        case Parse():
            of = f"{src.prefix}*" if src.prefix else ", ".join(src.keys)
            return f"{', '.join(src.into)} <- {src.read.__name__}({of})"
        case Sum():
            return f"{src.field} <- {src.a} + {src.b} when both recorded"
    raise TypeError(src)
