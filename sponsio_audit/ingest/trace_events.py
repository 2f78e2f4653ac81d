"""Facts of one trace's spans → its ordered events and guard decisions (SEMANTICS.md §1).

Everything that needs the span tree happens here, once per trace:

- order: by time (``llm_request`` at span start, ``llm_response`` at span end);
  ties by the span tree, as a pre-order walk whose siblings follow their position
  in the input (file, then span position in file): a parent precedes its
  children, unrelated spans follow their subtrees' positions in the file;
  within one span, request before response before inferred calls; an end time
  before the span's start (protobuf's unset end is 0) is no end time: the
  response is at the start and the duration is missing (latency atoms unknown),
  and so is the duration of a span whose start is unset (0);
- agent: recorded on the span, else the nearest agent-scope ancestor
  (``invoke_agent``, Traceloop/OpenInference agent kinds, ``sponsio.agent_turn``),
  else the resource ``service.name``;
- delegation: an agent-scope span whose nearest agent ancestor is another agent
  → ``delegation`` (agent = parent agent, target = this agent) at the span start;
- inferred tool calls: only in a trace without any tool span, from the LLM
  output's requested calls, placed right after that LLM's response; the result
  is the tool message with that call id in a later LLM input, when recorded;
- unrecorded tool calls (SEMANTICS.md §5): an LLM response that says it called
  tools (finish reason, requested or nameless calls), or in a trace without tool
  spans records neither its output nor a finish reason, and is followed by no
  tool call of its agent before that agent's next LLM request gets one tool call
  with no tool, args or result right after it (inferred);
- a tool span's bare argument value (OpenInference, one-parameter tool) is named
  after the one-key args of the requesting call with the same tool call id;
  otherwise its args stay missing;
- a span id seen twice in one trace gives events once when the copies record the same
  (a re-exported span: the first copy's file and record); copies that differ each give
  their events, since keeping only one could hide what the other recorded; spans
  without an id are all kept;
  a span whose parent is absent (or in a cycle) is a root (``span_tree``).

A trace comes in as ``TraceSpans`` (per-column lists: a chunk's own, or Arrow rows
read back) and its events go out as ``BODY_FIELDS`` tuples in ``seq`` order;
``trace_tables`` adds the trace id and ``seq`` and turns them into Arrow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from sponsio_audit.event import EVENT_SCHEMA, EVENT_TYPES
from sponsio_audit.ingest.conventions import FACT_FIELDS
from sponsio_audit.ingest.span_tree import walk
from sponsio_audit.ingest.values import dumps, parse

ROW_FIELDS = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "file_id",
    "record",
    "pos",
    "start_ns",
    "end_ns",
    "service",
    *FACT_FIELDS,
)
"""Columns of a staged span (table ``span_facts``), in order."""

BODY_FIELDS = tuple(EVENT_SCHEMA.names[2 : EVENT_SCHEMA.names.index("record") + 1])
"""The ``events`` columns of an event body (``span_events``' output): all but ``trace_id``,
``seq`` and the optional shared-prompt columns, which the caller adds per trace."""


def _at(fields: Sequence[str], names: str) -> list[int]:
    return [fields.index(k) for k in names.split()]


ROLE, CONVENTION, AGENT, SCOPE, TOOL, ARGS, CONTENT, PROMPT, SYSTEM = _at(
    FACT_FIELDS, "role convention agent agent_scope tool args content prompt system_prompt"
)
TIN, TOUT, TTOTAL, CONV, REQUESTED, CONTRACT, RESULT, MESSAGE = _at(
    FACT_FIELDS,
    "tokens_in tokens_out tokens_total conversation requested contract_id result message",
)
ETYPE, CALL_ID, BARE, WANTS, RESULTS = _at(
    FACT_FIELDS, "event_type call_id bare wants_tools results"
)
B_SPAN, B_TYPE, B_AGENT, B_TIME, B_CONV, B_CONVENTION, B_FILE, B_RECORD = _at(
    BODY_FIELDS, "span_id type agent start_ns conversation_id convention file_id record"
)
_UNSET: Any = object()
_key = itemgetter(0)

EventRow = tuple
"""A row of the ``events`` table in ``EVENT_SCHEMA`` column order."""


class TraceSpans(NamedTuple):
    """One trace's spans in file position order: the ``ROW_FIELDS`` columns before the
    facts as parallel lists, and each span's ``FACT_FIELDS`` tuple (a chunk's own lists
    in pass 1, ``span_facts`` rows read back in pass 2: the same values either way).

    A NamedTuple, not a frozen dataclass: one is built per trace, and a frozen
    dataclass costs 3× as much to build (its ``__init__`` sets each field through
    ``object.__setattr__``), 0.3 µs per span of ``bench/ingest.py``'s 10-span traces.
    """

    span: Sequence[Any]
    parent: Sequence[Any]
    file: Sequence[Any]
    record: Sequence[Any]
    start: Sequence[Any]
    end: Sequence[Any]
    service: Sequence[Any]
    facts: Sequence[Sequence[Any]]

    @classmethod
    def of_rows(cls, rows: Sequence[Sequence[Any]]) -> TraceSpans:
        """Spans from ``ROW_FIELDS`` row tuples."""
        at = ROW_FIELDS.index(FACT_FIELDS[0])
        span, parent, file, record, start, end, service = (
            [r[ROW_FIELDS.index(k)] for r in rows] for k in SPAN_BASE
        )
        return cls(span, parent, file, record, start, end, service, [tuple(r[at:]) for r in rows])


SPAN_BASE = ("span_id", "parent_span_id", "file_id", "record", "start_ns", "end_ns", "service")
"""``ROW_FIELDS`` columns of ``TraceSpans`` (its fields before ``facts``), in order."""


def _calls(facts: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """Requested tool calls of a trace's LLM spans: call id → args (the first request wins)."""
    calls: dict[str, Any] = {}
    for f in facts:
        if f[ROLE] == "llm" and f[REQUESTED] is not None:
            for _, args, cid in parse(f[REQUESTED]):
                if cid is not None:
                    calls.setdefault(cid, args)
    return calls


def _results(facts: Sequence[Sequence[Any]]) -> dict[str, str]:
    """Tool results recorded in a trace's LLM inputs: call id → text (the first wins)."""
    results: dict[str, str] = {}
    for f in facts:
        if f[ROLE] == "llm" and f[RESULTS] is not None:
            for cid, text in parse(f[RESULTS]).items():
                results.setdefault(cid, text)
    return results


def _named(bare: str, cid: str | None, calls: dict[str, Any]) -> str | None:
    """A bare argument named after the one-key args of the requesting call, else None."""
    args = calls.get(cid) if cid is not None else None
    if isinstance(args, dict) and len(args) == 1:
        (key,) = args
        return dumps({key: parse(bare)})
    return None


def _unrecorded(bodies: list[tuple], wanting: set[int]) -> list[tuple]:
    """``bodies`` (sorted) with a nameless tool call after each response in ``wanting``
    (object ids) that no tool call of its agent follows before that agent's next LLM request."""
    nearest: dict[Any, str] = {}  # agent → type of its next tool call or LLM request
    lonely: set[int] = set()
    for e in reversed(bodies):
        t = e[B_TYPE]
        if t == "tool_call" or t == "llm_request":
            nearest[e[B_AGENT]] = t
        elif id(e) in wanting and nearest.get(e[B_AGENT]) != "tool_call":
            lonely.add(id(e))
    if not lonely:
        return bodies
    out: list[tuple] = []
    for e in bodies:
        out.append(e)
        if id(e) in lonely:
            out.append(
                (e[B_SPAN], "tool_call", e[B_AGENT], None, None, None, None, None, None, None,
                 None, e[B_TIME], None, None, e[B_CONV], e[B_CONVENTION], True, e[B_FILE],
                 e[B_RECORD])
            )  # fmt: skip
    return out


def span_events(
    key: str, spans: TraceSpans, out: list[tuple], decide: Callable[[tuple], None]
) -> int:
    """Append the event bodies (``BODY_FIELDS``) of one trace to ``out`` in ``seq`` order
    and pass its guard decisions to ``decide``; returns the number of events."""
    facts = spans.facts
    sids, files, recs, starts, ends = spans.span, spans.file, spans.record, spans.start, spans.end
    services = spans.service
    n = len(facts)
    order, rank, par, unique = walk(sids, spans.parent)
    scope: list[Any] = [None] * n
    conv: list[Any] = [None] * n
    seen: dict[Any, list[tuple]] = {}
    # without distinct span ids some rows give no events: "has tool spans" is over all rows
    has_tools = unique is False and any(f[ROLE] in ("tool", "turn") for f in facts)
    trace_conv = _UNSET
    calls: dict[str, Any] | None = None
    staged: list[tuple[tuple[int, int, int], tuple]] = []
    llms: list[tuple[Sequence[Any], tuple, int]] = []
    checks: list[int] = []
    for i in order:
        f = facts[i]
        p = par[i]
        if p >= 0:
            up = scope[p]
            c = f[CONV] or conv[p]
        else:
            up = None
            c = f[CONV]
        scope[i] = (f[AGENT] or up) if f[SCOPE] else up
        conv[i] = c
        role = f[ROLE]
        if role is None:
            continue
        sid = sids[i]
        if not unique and sid is not None:  # spans without an id are never one span
            copy = (f, starts[i], ends[i], spans.parent[i])
            copies = seen.setdefault(sid, [])
            if copy in copies:
                continue
            copies.append(copy)
        if not c:
            if trace_conv is _UNSET:
                trace_conv = next((g[CONV] for g in facts if g[CONV] is not None), None)
            c = trace_conv
        s0, e0 = starts[i], ends[i]
        start = s0 or 0
        if e0 is None or e0 < start:  # an end before the start (0: protobuf's unset) is none
            end, dur = start, None
        else:
            end, dur = e0, (e0 - start if s0 else None)  # a start of 0: unset, as the end
        rk = rank[i]
        if role == "llm":
            agent = f[AGENT] or up or services[i]
            cv, fi, rec = f[CONVENTION], files[i], recs[i]
            staged.append(
                ((start, rk, 0),
                 (sid, "llm_request", agent, None, None, None, f[PROMPT], f[SYSTEM], None, None,
                  None, start, dur, None, c, cv, False, fi, rec))
            )  # fmt: skip
            resp = (sid, "llm_response", agent, None, None, f[CONTENT], None, None, f[TIN],
                    f[TOUT], f[TTOTAL], end, dur, None, c, cv, False, fi, rec)  # fmt: skip
            staged.append(((end, rk, 1), resp))
            llms.append((f, resp, rk))
        elif role == "tool" or role == "turn":
            has_tools = True
            et = f[ETYPE] if role == "turn" and f[ETYPE] in EVENT_TYPES else "tool_call"
            args = f[ARGS]
            if args is None and f[BARE] is not None:
                if calls is None:
                    calls = _calls(facts)
                args = _named(f[BARE], f[CALL_ID], calls)
            staged.append(
                ((start, rk, 0),
                 (sid, et, f[AGENT] or up or services[i], f[TOOL], args, f[CONTENT], None, None,
                  None, None, None, start, dur, None, c, f[CONVENTION], False, files[i], recs[i]))
            )  # fmt: skip
        elif role == "agent":
            target = f[AGENT]
            if target is not None and up is not None and up != target:
                staged.append(
                    ((start, rk, 0),
                     (sid, "delegation", up, None, None, None, None, None, None, None, None,
                      start, dur, target, c, f[CONVENTION], False, files[i], recs[i]))
                )  # fmt: skip
        elif role == "check":
            checks.append(i)
    wanting = _llm_calls(facts, llms, has_tools, staged)
    staged.sort(key=_key)
    bodies = [e for _, e in staged]
    del staged  # its sort keys: a 200k-span trace's are ~30 MB
    if wanting:
        bodies = _unrecorded(bodies, wanting)
    out.extend(bodies)
    if checks:
        _decisions(key, spans, order, par, scope, checks, decide)
    return len(bodies)


def _llm_calls(
    facts: Sequence[Sequence[Any]],
    llms: list[tuple[Sequence[Any], tuple, int]],
    has_tools: bool,
    staged: list[tuple[tuple[int, int, int], tuple]],
) -> set[int]:
    """Stage the tool calls inferred from LLM outputs (a trace without tool spans); returns
    the ids of the responses that may have called tools unrecorded (``_unrecorded``)."""
    wanting: set[int] = set()
    results: dict[str, str] | None = None
    for f, resp, rk in llms:
        if not has_tools and f[REQUESTED] is not None:
            if results is None:
                results = _results(facts)
            end = resp[B_TIME]
            for name, args, cid in parse(f[REQUESTED]):
                a = None if args is None else dumps(args)
                res = results.get(cid) if cid is not None else None
                staged.append(
                    ((end, rk, 2),
                     (resp[B_SPAN], "tool_call", resp[B_AGENT], name, a, res, None, None, None,
                      None, None, end, None, None, resp[B_CONV], resp[B_CONVENTION], True,
                      resp[B_FILE], resp[B_RECORD]))
                )  # fmt: skip
        elif f[WANTS] == "1" or f[REQUESTED] is not None:
            wanting.add(id(resp))
        elif not has_tools and f[WANTS] is None and f[CONTENT] is None:
            # recorded neither output nor finish reason, in a trace without tool spans: it may
            # have called tools (the official OpenAI instrumentation's streamed spans)
            wanting.add(id(resp))
    return wanting


def _decisions(
    key: str,
    spans: TraceSpans,
    order: Sequence[int],
    par: Sequence[int],
    scope: list[Any],
    checks: list[int],
    decide: Callable[[tuple], None],
) -> None:
    """The guard decisions of a trace's ``sponsio.contract_check`` spans (``checks``)."""
    facts = spans.facts
    turn = [-1] * len(facts)
    kids: dict[int, list[int]] = {}
    for i in order:
        p = par[i]
        turn[i] = i if facts[i][ROLE] == "turn" else (turn[p] if p >= 0 else -1)
        if p >= 0:
            kids.setdefault(p, []).append(i)
    for i in checks:
        r = facts[i]
        below = [facts[k] for k in kids.get(i, [])]
        action = next((g[RESULT] for g in below if g[ROLE] == "enforce"), None)
        evidence = next((g[MESSAGE] for g in below if g[ROLE] == "violation"), None)
        violated = any(g[ROLE] == "violation" for g in below)
        result = action or ("observed" if violated else "allowed")
        t = turn[i]
        agent = r[AGENT] or (facts[t][AGENT] if t >= 0 else None) or scope[i] or spans.service[i]
        tool = facts[t][TOOL] if t >= 0 else None
        decide(
            (spans.file[i], spans.record[i], key, spans.start[i], agent, tool, r[CONTRACT],
             result, evidence or r[MESSAGE])
        )  # fmt: skip


def trace_events(
    key: str,
    rows: Sequence[Sequence[Any]],
    emit: Callable[[EventRow], None],
    decide: Callable[[tuple], None],
) -> int:
    """``span_events`` of one trace given as ``ROW_FIELDS`` rows (file position order),
    each event passed to ``emit`` as a whole ``events`` row; returns the event count."""
    bodies: list[tuple] = []
    n = span_events(key, TraceSpans.of_rows(rows), bodies, decide)
    for seq, body in enumerate(bodies):
        emit((key, seq, *body))
    return n
