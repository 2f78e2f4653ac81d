"""Facts of one trace's spans → its ordered events and guard decisions (SEMANTICS.md §1).

Everything that needs the span tree happens here, once per trace:

- order: by time (``llm_request`` at span start, ``llm_response`` at span end);
  ties by the span tree, as a pre-order walk whose siblings follow their position
  in the input (file, then span position in file): a parent precedes its
  children, unrelated spans follow their subtrees' positions in the file;
  within one span, request before response before inferred calls;
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
- a span id seen twice in one trace (re-exported span) gives events once (first copy);
  a span whose parent is absent (or in a cycle) is a root.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sponsio_audit.event import EVENT_TYPES
from sponsio_audit.ingest.conventions import FACT_FIELDS
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

_I = {k: i for i, k in enumerate(ROW_FIELDS)}
SPAN, PARENT, FILE, REC, START, END, SERVICE = (
    _I[k]
    for k in ("span_id", "parent_span_id", "file_id", "record", "start_ns", "end_ns", "service")
)
ROLE, CONVENTION, AGENT, SCOPE, TOOL, ARGS, CONTENT = (
    _I[k] for k in ("role", "convention", "agent", "agent_scope", "tool", "args", "content")
)
PROMPT, SYSTEM, TIN, TOUT, TTOTAL, CONV, REQUESTED = (
    _I[k]
    for k in (
        "prompt",
        "system_prompt",
        "tokens_in",
        "tokens_out",
        "tokens_total",
        "conversation",
        "requested",
    )
)
CONTRACT, RESULT, MESSAGE, ETYPE = (
    _I[k] for k in ("contract_id", "result", "message", "event_type")
)
CALL_ID, BARE, WANTS, RESULTS = (_I[k] for k in ("call_id", "bare", "wants_tools", "results"))
_NAMELESS = ("tool_call", None, None, None, None, None, None, None, None, None)

EventRow = tuple
"""A row of the ``events`` table in ``EVENT_SCHEMA`` column order."""


def _walk(rows: Sequence[Sequence[Any]]) -> tuple[list[int], list[int]]:
    """Pre-order ranks and parent index (-1 for roots) of the rows' span tree."""
    n = len(rows)
    first: dict[Any, int] = {}
    for i, r in enumerate(rows):
        sid = r[SPAN]
        if sid is not None and sid not in first:
            first[sid] = i
    parent = [-1] * n
    children: dict[int, list[int]] = {}  # only spans with children: most spans are leaves
    roots = []
    for i, r in enumerate(rows):
        j = first.get(r[PARENT], -1) if r[PARENT] is not None else -1
        if j < 0 or j == i:
            roots.append(i)
        else:
            parent[i] = j
            kids = children.get(j)
            if kids is None:
                children[j] = [i]
            else:
                kids.append(i)
    rank = [-1] * n
    k = 0
    for start in [*roots, *range(n)]:
        if rank[start] >= 0:
            continue
        stack = [start]
        while stack:
            i = stack.pop()
            if rank[i] >= 0:
                continue
            rank[i] = k
            k += 1
            kids = children.get(i)
            if kids is not None:
                stack.extend(reversed(kids))
    return rank, _topo_parents(parent, rank)


def _topo_parents(parent: list[int], rank: list[int]) -> list[int]:
    """Parents with links that go against the walk (cycles) cut, so parents precede children."""
    return [p if p >= 0 and rank[p] < rank[i] else -1 for i, p in enumerate(parent)]


def _calls_and_results(rows: Sequence[Sequence[Any]]) -> tuple[dict[str, Any], dict[str, str]]:
    """Requested calls (id → args) and recorded tool results (id → text) of a trace."""
    calls: dict[str, Any] = {}
    results: dict[str, str] = {}
    for r in rows:
        if r[ROLE] != "llm":
            continue
        if r[REQUESTED] is not None:
            for _, args, cid in parse(r[REQUESTED]):
                if cid is not None:
                    calls.setdefault(cid, args)
        if r[RESULTS] is not None:
            for cid, text in parse(r[RESULTS]).items():
                results.setdefault(cid, text)
    return calls, results


def _named(bare: str, cid: str | None, calls: dict[str, Any]) -> str | None:
    """A bare argument named after the one-key args of the requesting call, else None."""
    args = calls.get(cid) if cid is not None else None
    if isinstance(args, dict) and len(args) == 1:
        (key,) = args
        return dumps({key: parse(bare)})
    return None


def _silent(r: Sequence[Any], has_tools: bool) -> bool:
    """An LLM response that recorded neither its output nor a finish reason, in a trace
    with no tool span: it may have called tools (the official OpenAI instrumentation's
    streamed spans without their log records), so it counts as one that did."""
    return not has_tools and r[WANTS] is None and r[CONTENT] is None


def _unrecorded(staged: list[tuple[Any, tuple]], wants: set[int]) -> list[tuple[Any, tuple]]:
    """``staged`` (sorted) with a nameless tool call after each response in ``wants``
    that no tool call of its agent follows before that agent's next LLM request."""
    if not wants:
        return staged
    out: list[tuple[Any, tuple]] = []
    for k, item in enumerate(staged):
        out.append(item)
        if k not in wants:
            continue
        e = item[1]
        agent = e[14]
        followed = False
        for _, later in staged[k + 1 :]:
            if later[14] != agent:
                continue
            if later[0] == "tool_call":
                followed = True
                break
            if later[0] == "llm_request":
                break
        if not followed:
            out.append((item[0], (*_NAMELESS, e[10], None, True, *e[13:])))
    return out


def trace_events(
    key: str,
    rows: Sequence[Sequence[Any]],
    emit: Callable[[EventRow], None],
    decide: Callable[[tuple], None],
) -> int:
    """Emit the events of one trace (rows in file position order); returns the event count."""
    rank, parent = _walk(rows)
    n = len(rows)
    order = sorted(range(n), key=rank.__getitem__)
    seen: set[Any] = set()
    scope: list[str | None] = [None] * n
    conv: list[str | None] = [None] * n
    turn = [-1] * n
    trace_conv = next((r[CONV] for r in rows if r[CONV] is not None), None)
    has_tools = any(r[ROLE] in ("tool", "turn") for r in rows)
    calls, results = _calls_and_results(rows)
    staged: list[tuple[tuple[int, int, int], tuple]] = []
    wanting: list[tuple] = []
    checks: list[int] = []
    kids: dict[int, list[int]] = {}
    for i in order:
        r = rows[i]
        p = parent[i]
        up = scope[p] if p >= 0 else None
        scope[i] = (r[AGENT] or up) if r[SCOPE] else up
        conv[i] = r[CONV] or (conv[p] if p >= 0 else None)
        turn[i] = i if r[ROLE] == "turn" else (turn[p] if p >= 0 else -1)
        if p >= 0:
            kids.setdefault(p, []).append(i)
        role = r[ROLE]
        if role is None or r[SPAN] in seen:
            continue
        seen.add(r[SPAN])
        agent = r[AGENT] or up or r[SERVICE]
        c = conv[i] or trace_conv
        start = r[START] or 0
        end = r[END] if r[END] is not None else start
        dur = end - start if r[END] is not None and r[START] is not None else None
        base = (r[SPAN], agent, c, r[CONVENTION], r[FILE], r[REC])
        if role == "tool" or role == "turn":
            et = r[ETYPE] if role == "turn" and r[ETYPE] in EVENT_TYPES else "tool_call"
            args = r[ARGS]
            if args is None and r[BARE] is not None:
                args = _named(r[BARE], r[CALL_ID], calls)
            ev = (et, r[TOOL], args, r[CONTENT], None, None, None, None, None, None)
            staged.append(((start, rank[i], 0), (*ev, start, dur, False, *base)))
        elif role == "llm":
            req = ("llm_request", None, None, None, r[PROMPT], r[SYSTEM], None, None, None, None)
            staged.append(((start, rank[i], 0), (*req, start, dur, False, *base)))
            resp = (
                "llm_response",
                None,
                None,
                r[CONTENT],
                None,
                None,
                r[TIN],
                r[TOUT],
                r[TTOTAL],
                None,
            )
            item = ((end, rank[i], 1), (*resp, end, dur, False, *base))
            staged.append(item)
            inferred = not has_tools and r[REQUESTED] is not None
            if inferred:
                for name, args, cid in parse(r[REQUESTED]):
                    a = None if args is None else dumps(args)
                    res = results.get(cid) if cid is not None else None
                    call = ("tool_call", name, a, res, None, None, None, None, None, None)
                    staged.append(((end, rank[i], 2), (*call, end, None, True, *base)))
            elif r[WANTS] == "1" or r[REQUESTED] is not None or _silent(r, has_tools):
                wanting.append(item[1])
        elif role == "agent" and r[AGENT] is not None and up is not None and up != r[AGENT]:
            dl = ("delegation", None, None, None, None, None, None, None, None, r[AGENT])
            staged.append(((start, rank[i], 0), (*dl, start, dur, False, r[SPAN], up, *base[2:])))
        elif role == "check":
            checks.append(i)
    staged.sort(key=lambda t: t[0])
    if wanting:
        ids = {id(e) for e in wanting}
        staged = _unrecorded(staged, {k for k, (_, e) in enumerate(staged) if id(e) in ids})
    n_events = len(staged)
    staged.reverse()  # popped in order: each staged event is freed once emitted
    for seq in range(n_events):
        e = staged.pop()[1]
        (et, tool, args, content, prompt, system, tin, tout, ttot, target) = e[:10]
        start, dur, inferred, span, agent, c, convention, fid, rec = e[10:]
        emit(
            (
                key,
                seq,
                span,
                et,
                agent,
                tool,
                args,
                content,
                prompt,
                system,
                tin,
                tout,
                ttot,
                start,
                dur,
                target,
                c,
                convention,
                inferred,
                fid,
                rec,
            )
        )
    for i in checks:
        _decision(key, rows, i, kids.get(i, []), turn, scope, decide)
    return n_events


def _decision(
    key: str,
    rows: Sequence[Sequence[Any]],
    i: int,
    kids: list[int],
    turn: list[int],
    scope: list[str | None],
    decide: Callable[[tuple], None],
) -> None:
    """One guard decision from a ``sponsio.contract_check`` span and its children."""
    r = rows[i]
    action = next((rows[k][RESULT] for k in kids if rows[k][ROLE] == "enforce"), None)
    evidence = next((rows[k][MESSAGE] for k in kids if rows[k][ROLE] == "violation"), None)
    violated = any(rows[k][ROLE] == "violation" for k in kids)
    result = action or ("observed" if violated else "allowed")
    t = turn[i]
    agent = r[AGENT] or (rows[t][AGENT] if t >= 0 else None) or scope[i] or r[SERVICE]
    tool = rows[t][TOOL] if t >= 0 else None
    decide(
        (r[FILE], r[REC], key, r[START], agent, tool, r[CONTRACT], result, evidence or r[MESSAGE])
    )
