"""Every fixture made by a real instrumentation, read field by field against the ground truth.

For each case (conftest): one trace per scenario with the truth's trace id; per
LLM call an ``llm_request`` (system prompt, every message text in order) and an
``llm_response`` (output text, token usage); per tool the script ran a
``tool_call`` (name, args, result). What the instrumentation did not record is
*missing* (None), never empty; spans read without their log records get one
tool call with no tool after each tool-calling response (SEMANTICS.md §5).
"""

from __future__ import annotations

import json
from typing import Any

from sponsio_audit.ingest import Store

from .conftest import (
    SERVICE,
    STREAM_NO_FINISH,
    SYSTEM,
    Case,
    events_by_trace,
    load,
    scenarios,
    truth,
)


def _expected(
    steps: list[dict[str, Any]], records: str, unknown_finish: bool = False
) -> list[tuple[str, dict[str, Any]]]:
    """The event kinds the steps must give, each with the step it comes from.

    Read without content, a response is followed by a tool call with no tool when
    it called tools, or when nothing recorded whether it did (``unknown_finish``).
    """
    out: list[tuple[str, dict[str, Any]]] = []
    for st in steps:
        if st["kind"] == "llm":
            out += [("llm_request", st), ("llm_response", st)]
            if records == "none" and (st["tool_calls"] or unknown_finish):
                out.append(("nameless", st))
        elif records != "none":
            out.append(("tool_call", st))
    return out


def _unknown_finish(case: Case, sc: dict[str, Any]) -> bool:
    return bool(sc["stream"]) and case.combo in STREAM_NO_FINISH


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    """The texts a prompt must show, in order: each message's content."""
    return [m["content"] for m in messages if m.get("content")]


def _in_order(prompt: str, texts: list[str]) -> bool:
    at = 0
    for t in texts:
        at = prompt.find(t, at)
        if at < 0:
            return False
        at += len(t)
    return True


def _check_request(e: dict[str, Any], st: dict[str, Any], records: str) -> None:
    assert e["type"] == "llm_request"
    if records != "all":
        assert (e["prompt"], e["system_prompt"]) == (None, None)
        return
    assert e["system_prompt"] == SYSTEM
    # the system message may be in the prompt or apart (gen_ai.system_instructions)
    texts = [t for t in _texts(st["input"]) if t != SYSTEM]
    assert _in_order(e["prompt"], texts), (e["prompt"], texts)


def _check_response(e: dict[str, Any], st: dict[str, Any], records: str) -> None:
    assert e["type"] == "llm_response"
    u = st["usage"]
    assert (e["tokens_in"], e["tokens_out"], e["tokens_total"]) == (
        u["input"],
        u["output"],
        u["total"],
    )
    want = (st["output"] or "") if records == "all" else None
    assert e["content"] == want


def _check_tool(e: dict[str, Any], st: dict[str, Any], records: str, driver: str) -> None:
    assert (e["type"], e["tool"]) == ("tool_call", st["name"])
    # the openai SDK loop has no tool spans: its calls come from the LLM's requests
    assert e["inferred"] is (driver == "openai")
    if records == "all":
        assert json.loads(e["args"]) == st["args"]
        assert e["content"] == st["result"]
    else:
        assert (e["args"], e["content"]) == (None, None)


def test_events_match_the_ground_truth(case: Case) -> None:
    store = load(*case.files)
    driver = truth(case.combo)["driver"]
    got = events_by_trace(store)
    for name, sc in scenarios(case.combo).items():
        evs = got.get(sc["trace_id"], [])
        want = _expected(sc["steps"], case.records, _unknown_finish(case, sc))
        assert [e["seq"] for e in evs] == list(range(len(evs)))
        assert len(evs) == len(want), (name, [(e["type"], e["tool"]) for e in evs])
        for e, (kind, st) in zip(evs, want, strict=True):
            assert e["agent"] == SERVICE
            if kind == "llm_request":
                _check_request(e, st, case.records)
            elif kind == "llm_response":
                _check_response(e, st, case.records)
            elif kind == "tool_call":
                _check_tool(e, st, case.records, driver)
            else:  # a tool call happened, the trace did not record which (SEMANTICS §5)
                assert (e["type"], e["tool"], e["args"], e["content"], e["inferred"]) == (
                    "tool_call",
                    None,
                    None,
                    None,
                    True,
                )
    # nothing was skipped, and events of no other trace appeared
    assert store.con.execute("SELECT count(*) FROM skipped").fetchall() == [(0,)]
    assert set(got) <= {sc["trace_id"] for sc in scenarios(case.combo).values()}


def test_every_trace_is_listed_even_one_without_events(case: Case) -> None:
    store = load(*case.files)
    listed = dict(store.con.execute("SELECT trace_id, events FROM traces").fetchall())
    for name, sc in scenarios(case.combo).items():
        n = len(_expected(sc["steps"], case.records, _unknown_finish(case, sc)))
        assert listed.get(sc["trace_id"]) == n, name
    assert listed[scenarios(case.combo)["silent"]["trace_id"]] == 0


def _rows(store: Store) -> list[tuple[Any, ...]]:
    cols = "trace_id, seq, type, tool, args, content, prompt, system_prompt, tokens_total"
    return store.con.execute(f"SELECT {cols} FROM events ORDER BY trace_id, seq").fetchall()


def test_logs_in_a_later_ingest_run_fill_the_spans_read_before() -> None:
    both = load("openai_v2_logs.traces.pb.gz", "openai_v2_logs.logs.pb.gz")
    from sponsio_audit.ingest import ingest

    from .conftest import FIX

    split = Store.open(None)
    ingest([FIX / "openai_v2_logs.traces.pb.gz"], split)
    ingest([FIX / "openai_v2_logs.logs.pb.gz"], split)
    assert _rows(split) == _rows(both)
    split2 = Store.open(None)
    ingest([FIX / "openai_v2_logs.logs.jsonl.gz"], split2)  # logs before any span
    assert split2.con.execute("SELECT count(*) FROM events").fetchall() == [(0,)]
    ingest([FIX / "openai_v2_logs.traces.jsonl.gz"], split2)
    assert _rows(split2) == _rows(both)
