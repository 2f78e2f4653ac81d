"""A generator of hostile trace inputs, each written beside one good file, with what must happen.

Every ``Case`` writes its files into a fresh folder (``build``) and returns an
``Expect``: which records must be listed as skipped (file, record, a fragment
of the reason), which records must be loaded, and SQL facts about the store.
The expectations come from the issue (13) and ARCHITECTURE.md's accounting
rule, not from the code's output: a bad value costs at most its record, a
bound hit names the limit and its value, nothing after a bad record is lost.

Inputs are built from plain bytes and dicts here (OTLP/JSON by hand, OTLP
protobuf with the generated ``opentelemetry-proto`` classes), sized so the
whole suite stays fast: a bomb only needs to pass the ratio check's floor
(``Limits.ratio_floor``), not to be gigabytes; ``bench/hostile.py`` runs the
issue's full-size ones and prints time and peak RSS.
"""

from __future__ import annotations

import json
from pathlib import Path

from sponsio_audit.ingest.limits import DEFAULT

from . import streams as s
from .expect import ANSI, GOOD, GOOD_EVENTS, MARK, RICH, Case, Expect, _events_of, _good
from .otlp import (
    _kv,
    line,
    ok_line,
    request,
    sid,
    tid,
    tool_span,
)

__all__ = ["ANSI", "CASES", "GOOD", "GOOD_EVENTS", "MARK", "Case", "Expect", "build"]


# -- the cases -------------------------------------------------------------------------------


def lone_surrogate(d: Path) -> Expect:
    """Half an emoji (``\\ud83c``) in a span name and a result: the field is kept with U+FFFD."""
    bad = tool_span(tid(1), sid(1), "read_file", {"path": "/workspace/\ud83c"})
    bad["name"] = "execute_tool read_file \ud83c"
    bad["attributes"].append(_kv("gen_ai.tool.call.result", "ok \ud83c"))
    (d / "surrogate.jsonl").write_bytes(line(request(bad)) + ok_line(2))
    (d / "native.jsonl").write_bytes(
        line({"type": "tool_call", "tool": "bash", "args": {"c": "x\udc00"}, "ts": 1.7e9})
        + line({"type": "tool_call", "tool": "read", "ts": 1.7e9 + 1})
    )
    return Expect(
        loaded={"surrogate.jsonl": frozenset({1, 2}), "native.jsonl": frozenset({1, 2})},
        sql=(
            ("SELECT content FROM events WHERE content LIKE '%ok%'", [("ok \ufffd",)]),
            ("SELECT count(*) FROM events WHERE args LIKE '%\ufffd%'", [(2,)]),
        ),
    )


def int64_overflow(d: Path) -> Expect:
    """Timestamps and ``intValue`` beyond int64 (string and number): only the field is lost."""
    huge = "99999999999999999999"
    s1 = tool_span(tid(1), sid(1), "read_file", {"p": 1}, start=huge)
    s1["attributes"].append(_kv("gen_ai.usage.input_tokens", {"intValue": huge}))
    s1["attributes"].append(_kv("n", {"intValue": 2**70}))
    s2 = tool_span(tid(2), sid(2), "read_file", {"p": 2}, start=str(2**64))
    (d / "overflow.jsonl").write_bytes(line(request(s1)) + line(request(s2)) + ok_line(3))
    return Expect(
        loaded={"overflow.jsonl": frozenset({1, 2, 3})},
        sql=(
            (
                f"SELECT count(*) FROM spans WHERE trace_id IN ('{tid(1)}', '{tid(2)}') "
                "AND start_ns IS NULL AND end_ns IS NULL",
                [(2,)],
            ),
            (f"SELECT tokens_in FROM events WHERE trace_id = '{tid(1)}'", [(None,)]),
        ),
    )


def session_ts_overflow(d: Path) -> Expect:
    """``ts: 9.5e18`` in a Sponsio session log (an OverflowError in store.flush before)."""
    rows = [
        {"ts": 9.5e18, "agent_id": "a", "action": "bash", "contract_id": "c", "result": "allowed"},
        {"ts": 1.7e9, "agent_id": "a", "action": "read", "contract_id": "c", "result": "allowed"},
        {"ts": -9.5e18, "agent_id": "a", "action": "ls", "contract_id": "c", "result": "allowed"},
    ]
    (d / "session.jsonl").write_bytes(b"".join(line(r) for r in rows))
    return Expect(
        loaded={"session.jsonl": frozenset({1, 2, 3})},
        sql=(
            (_events_of("session.jsonl") + " AND e.start_ns IS NULL", [(2,)]),
            ("SELECT count(*) FROM decisions", [(3,)]),
        ),
    )


def native_tokens_overflow(d: Path) -> Expect:
    """``tokens_in: 1e20`` in a native trace: tokens unknown, the event kept."""
    (d / "native.jsonl").write_bytes(
        line({"type": "llm_response", "ts": 1.7e9, "tokens_in": 1e20, "tokens_out": 2**64})
        + line({"type": "tool_call", "tool": "read", "ts": 1.7e9 + 1, "duration_ns": -(2**70)})
    )
    return Expect(
        loaded={"native.jsonl": frozenset({1, 2})},
        sql=(
            (
                _events_of("native.jsonl")
                + " AND e.tokens_in IS NULL AND e.tokens_out IS NULL AND e.duration_ns IS NULL",
                [(2,)],
            ),
        ),
    )


TRANSCRIPT_MESSAGES = 6000


def big_transcript(d: Path) -> Expect:
    """A 6 000-message transcript (a ChunkedArray TypeError before): every assistant message an
    llm_request and llm_response pair, each prompt all messages before it.

    One message in 100 is the assistant's, so prompts add up to ~2 MB: the quadratic
    full-size case (every other message) is ``bench/hostile.py``'s.
    """
    msgs = [
        {"role": "assistant" if i % 100 == 99 else "user", "content": f"m{i}"}
        for i in range(TRANSCRIPT_MESSAGES)
    ]
    (d / "chat.json").write_bytes(json.dumps(msgs).encode())
    # the last request's prompt renders the 5 999 messages before it, "role: text" joined by \n
    last = "\n".join(f"{m['role']}: {m['content']}" for m in msgs[: TRANSCRIPT_MESSAGES - 1])
    return Expect(
        loaded={"chat.json": frozenset({1})},
        sql=(
            (_events_of("chat.json"), [(2 * TRANSCRIPT_MESSAGES // 100,)]),
            ("SELECT max(length(prompt)) FROM events", [(len(last),)]),
        ),
    )


def transcript_over_limit(d: Path) -> Expect:
    """A run with more messages than ``Limits.messages``: that run skipped, the next one read."""
    n = DEFAULT.messages + 1
    big = {"messages": [{"role": "user", "content": "x"}] * n, "metadata": {"id": "big"}}
    small = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        "metadata": {"id": "small"},
    }
    (d / "runs.jsonl").write_bytes(line(big) + line(small))
    return Expect(
        skips=(("runs.jsonl", 1, f"limit messages={DEFAULT.messages}"),),
        loaded={"runs.jsonl": frozenset({2})},
    )


def xml_illegal(d: Path) -> Expect:
    """U+FFFE/U+FFFF and C0 controls in a trace id and tool call that is a violation."""
    t = "t\ufffe\uffff\x01\x0b-1"
    span = tool_span(t, sid(1), "bash", {"command": "rm -rf /"})
    (d / "noncharacters.jsonl").write_bytes(line(request(span)))
    return Expect(loaded={"noncharacters.jsonl": frozenset({1})})


def markup(d: Path) -> Expect:
    """HTML, ANSI escapes and rich markup in a file name, a trace id and a skip reason."""
    t = f"{MARK}{ANSI}{RICH}"
    span = tool_span(t, sid(1), "bash", {"command": "rm -rf /"})
    evil = f"evil{MARK}{ANSI}[bold red]x.jsonl"  # no "/" in a file name
    (d / evil).write_bytes(line(request(span)))
    (d / "native_evil.jsonl").write_bytes(
        line({"type": f"{MARK}{ANSI}{RICH}", "tool": "x"})
        + line({"type": "tool_call", "tool": "read", "ts": 1.7e9})
    )
    return Expect(
        skips=(("native_evil.jsonl", 1, "unknown event type"),),
        loaded={evil: frozenset({1}), "native_evil.jsonl": frozenset({2})},
        markup=True,
    )


CASES: tuple[Case, ...] = (
    Case("lone_surrogate", lone_surrogate),
    Case("int64_overflow", int64_overflow),
    Case("session_ts_overflow", session_ts_overflow),
    Case("native_tokens_overflow", native_tokens_overflow),
    Case("big_transcript", big_transcript),
    Case("transcript_over_limit", transcript_over_limit),
    Case("gzip_bomb", s.gzip_bomb),
    Case("zstd_bomb", s.zstd_bomb),
    Case("giant_line", s.giant_line),
    Case("deep_nesting", s.deep_nesting),
    Case("irregular_files", s.irregular_files),
    Case("nul_prefix", s.nul_prefix),
    Case("metrics_protobuf", s.metrics_protobuf),
    Case("logs_first_collector", s.logs_first_collector),
    Case("mixed_signals", s.mixed_signals),
    Case("xml_illegal", xml_illegal),
    Case("markup", markup),
    Case("truncated_protobuf", s.truncated_protobuf),
    Case("broken_json_lines", s.broken_json_lines),
    Case("binary_and_empty", s.binary_and_empty),
    Case("huge_attribute", s.huge_attribute),
    Case("invalid_utf8", s.invalid_utf8),
    Case("corrupt_gzip", s.corrupt_gzip),
    Case("odd_attribute_types", s.odd_attribute_types),
    Case("many_attributes", s.many_attributes),
    Case("oversize_proto_record", s.oversize_proto_record),
    Case("record_bomb", s.record_bomb),
)


def build(case: Case, d: Path) -> Expect:
    """Write ``case`` and the good file into ``d``; the good file's record is always expected."""
    d.mkdir(parents=True, exist_ok=True)
    _good(d)
    exp = case.build(d)
    return Expect(
        skips=exp.skips,
        loaded={GOOD: frozenset({1}), **exp.loaded},
        either=exp.either,
        sql=exp.sql,
        no_spans=exp.no_spans,
        markup=exp.markup,
    )
