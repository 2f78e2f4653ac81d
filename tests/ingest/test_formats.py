"""Every file format: OTLP variants and wrappers, session logs, native traces, transcripts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sponsio_audit.ingest import Store, ingest

from .conftest import OTEL, REPO, check, events, load, rows

GENAI_VARIANTS = [
    ("genai.jsonl", "otlp_json"),
    ("genai.pretty.json", "otlp_json"),
    ("genai.jsonl.zst", "otlp_json"),
    ("genai.pb", "otlp_proto"),
    ("genai.raw.pb", "otlp_proto"),
    ("genai.pb.gz", "otlp_proto"),
    ("genai.zstd-records.pb", "otlp_proto"),
]


@pytest.mark.parametrize(("name", "fmt"), GENAI_VARIANTS)
def test_otlp_layouts_and_compression(name: str, fmt: str) -> None:
    store, s = load(OTEL / name)
    assert (s.spans, s.skipped, s.events) == (6, 0, 6)
    (f,) = rows(store, "SELECT * FROM files")
    assert f["format"] == fmt
    ref, _ = load(OTEL / "genai.jsonl")
    strip = [{k: v for k, v in e.items() if k != "file_id"} for e in events(ref)]
    assert [{k: v for k, v in e.items() if k != "file_id"} for e in events(store)] == strip


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_sponsio_session_log_groups_lines(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "2026-04-24T10-12-33Z.jsonl",
        [
            {
                "ts": "2026-04-24T10:12:33Z",
                "agent_id": "support_bot",
                "action": "lookup_order",
                "constraint": "rate_limit",
                "result": "allowed",
            },
            {
                "ts": "2026-04-24T10:12:33Z",
                "agent_id": "support_bot",
                "action": "lookup_order",
                "constraint": "no_pii",
                "result": "allowed",
            },
            {
                "ts": "2026-04-24T10:12:35Z",
                "agent_id": "support_bot",
                "action": "issue_refund",
                "constraint": "refund_limit",
                "result": "blocked",
            },
        ],
    )
    store, s = load(p)
    assert (s.records, s.skipped, s.events, s.traces) == (3, 0, 2, 1)
    a, b = events(store)
    check(
        a,
        type="tool_call",
        tool="lookup_order",
        agent="support_bot",
        args=None,
        seq=0,
        start_ns=1777025553 * 10**9,
        record=1,
        convention="sponsio_session",
    )
    check(b, tool="issue_refund", args=None, seq=1, start_ns=1777025555 * 10**9, record=3)
    ds = rows(store, "SELECT record, contract_id, result, tool FROM decisions ORDER BY record")
    assert [tuple(d.values()) for d in ds] == [
        (1, "rate_limit", "allowed", "lookup_order"),
        (2, "no_pii", "allowed", "lookup_order"),
        (3, "refund_limit", "blocked", "issue_refund"),
    ]


def test_guard_session_log_with_args(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "guard.jsonl",
        [
            {
                "ts": "2026-05-01T08:00:00.250000Z",
                "agent_id": "ops",
                "action": "bash",
                "args": {"cmd": "ls", "token": "<redacted>"},
                "event_type": "tool_call",
                "contract_id": "no_rm",
                "result": "allowed",
                "message": "",
            },
            {
                "ts": "2026-05-01T08:00:01Z",
                "agent_id": "ops",
                "action": "bash",
                "args": {"cmd": "rm -rf /"},
                "event_type": "tool_call",
                "contract_id": "no_rm",
                "result": "blocked",
                "message": "matched rm -rf",
            },
        ],
    )
    store, _ = load(p)
    a, b = events(store)
    check(
        a,
        tool="bash",
        args='{"cmd":"ls","token":"<redacted>"}',
        agent="ops",
        start_ns=(1777622400 * 10**9) + 250_000_000,
    )
    check(b, tool="bash", args='{"cmd":"rm -rf /"}')
    d = rows(store, "SELECT contract_id, result, message FROM decisions ORDER BY record")
    assert d[1] == {"contract_id": "no_rm", "result": "blocked", "message": "matched rm -rf"}


def test_native_jsonl_and_events_document(tmp_path: Path) -> None:
    evs = [
        {
            "ts": 1714550400.5,
            "agent": "coder",
            "type": "tool_call",
            "tool": "read_file",
            "args": {"path": "/etc/hosts"},
            "content": "127.0.0.1 localhost",
        },
        {"ts": 1714550401, "agent": "coder", "type": "llm_response", "content": "done"},
        {"ts": 1714550402, "agent": "coder", "type": "tool_call", "tool": "bash", "args": "ls -la"},
    ]
    for path in (
        _write(tmp_path / "a.shield-trace.jsonl", evs),
        _write(tmp_path / "b.json", [{"events": evs}]),
    ):
        store, s = load(path)
        assert s.skipped == 0
        a, b, c = events(store)
        check(
            a,
            type="tool_call",
            tool="read_file",
            args='{"path":"/etc/hosts"}',
            content="127.0.0.1 localhost",
            agent="coder",
            start_ns=1714550400_500_000_000,
        )
        check(b, type="llm_response", tool=None, args=None, content="done")
        check(c, tool="bash", args='{"input":"ls -la"}', start_ns=1714550402 * 10**9)


TRANSCRIPT = [
    {"role": "system", "content": "You are ops."},
    {"role": "user", "content": "Clean /tmp"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "t1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"cmd": "rm -rf /tmp/x"}'},
            },
            {
                "id": "t2",
                "type": "function",
                "function": {"name": "ls", "arguments": {"dir": "/tmp"}},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "t1", "content": "ok"},
    {"role": "assistant", "content": "Cleaned."},
]


def _check_transcript(ev: list[dict[str, object]], agent: str | None) -> None:
    types = ["llm_request", "llm_response", "tool_call", "tool_call", "llm_request", "llm_response"]
    assert [e["type"] for e in ev] == types
    check(
        ev[0],
        prompt="system: You are ops.\nuser: Clean /tmp",
        system_prompt="You are ops.",
        agent=agent,
        start_ns=None,
        convention="transcript",
    )
    check(ev[1], content="")
    check(ev[2], tool="bash", args='{"cmd":"rm -rf /tmp/x"}', content="ok")
    check(ev[3], tool="ls", args='{"dir":"/tmp"}', content=None)
    assert ev[4]["prompt"].endswith('tool_call ls({"dir":"/tmp"})\ntool: ok')
    check(ev[5], content="Cleaned.")


def test_transcript_json_list(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps(TRANSCRIPT, indent=1))
    store, s = load(p)
    assert (s.records, s.traces, s.skipped) == (1, 1, 0)
    _check_transcript(events(store), None)


def test_transcript_jsonl_runs(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "runs.jsonl",
        [
            {"messages": TRANSCRIPT, "metadata": {"run_id": "r1", "agent": "ops"}},
            {"messages": TRANSCRIPT[:2], "metadata": {"run_id": "r2"}},
        ],
    )
    store, s = load(p)
    assert (s.records, s.traces) == (2, 2)
    ev = events(store)
    _check_transcript([e for e in ev if e["trace_id"] == "r1"], "ops")
    assert [e for e in ev if e["trace_id"] == "r2"] == []


def test_directory_sorted_and_logs_skipped(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.pb").write_bytes((OTEL / "sponsio.pb").read_bytes())
    (tmp_path / "a.jsonl").write_bytes((OTEL / "openllmetry.jsonl").read_bytes())
    (tmp_path / "logs.json").write_text('{"resourceLogs": []}\n')
    (tmp_path / "metrics.json").write_text('{"resourceMetrics": []}\n')
    store, s = load(tmp_path)
    fs = rows(store, "SELECT file_id, path, format FROM files ORDER BY file_id")
    names = [Path(f["path"]).name for f in fs]
    assert names == ["a.jsonl", "logs.json", "metrics.json", "z.pb"]
    sk = rows(store, "SELECT file_id, record, reason FROM skipped ORDER BY file_id")
    # each line is routed by its own signal: a logs request without GenAI log records
    # and a metrics request are skipped records (line 1), with the reason
    assert [(r["record"], r["reason"]) for r in sk] == [
        (1, "OTLP logs with no log records"),
        (1, "OTLP metrics, not traces"),
    ]
    assert s.spans == 4 + 6


def test_stdin(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    code = (
        "import sys; from sponsio_audit.ingest import Store, ingest; "
        f"s = Store.open({str(db)!r}); print(ingest(['-'], s).spans); s.close()"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=(OTEL / "genai.pb.gz").read_bytes(),
        capture_output=True,
        check=True,
        cwd=REPO,
    )
    assert out.stdout.strip() == b"6"
    store = Store.open(db)
    assert rows(store, "SELECT path, format FROM files") == [{"path": "-", "format": "otlp_proto"}]


def test_group_by_conversation(tmp_path: Path) -> None:
    store = Store.open(None)
    ingest([OTEL / "genai.jsonl", OTEL / "openinference.jsonl"], store, group_by="conversation")
    keys = [r["trace_id"] for r in rows(store, "SELECT DISTINCT trace_id FROM events ORDER BY 1")]
    assert keys == [f"{0xABF:016x}{1:016x}", "conv-42"]  # openinference has no conversation id


def test_json_ids_not_hex_are_opaque(tmp_path: Path) -> None:
    doc = {
        "resourceSpans": [
            {
                "instrumentationLibrarySpans": [
                    {
                        "spans": [
                            {
                                "traceId": "W4j/95gDgQPSabYzgT/GDA==",
                                "spanId": "Run-1",
                                "name": "x",
                                "startTimeUnixNano": 5,
                                "endTimeUnixNano": "7",
                                "kind": "SPAN_KIND_CLIENT",
                                "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
                                "attributes": [
                                    {"key": "n", "value": {"intValue": "9007199254740993"}},
                                    {"key": "d", "value": {"doubleValue": 2.5}},
                                    {"key": "b", "value": {"boolValue": True}},
                                    {"key": "new", "value": {"futureValue": 1}},
                                ],
                                "unknownField": {"x": 1},
                            }
                        ]
                    }
                ]
            }
        ]
    }
    p = tmp_path / "x.json"
    p.write_text(json.dumps(doc))
    store, _ = load(p, db=tmp_path / "x.duckdb")
    (sp,) = rows(store, "SELECT * FROM spans")
    assert (sp["trace_id"], sp["span_id"], sp["parent_span_id"]) == (
        "W4j/95gDgQPSabYzgT/GDA==",
        "Run-1",
        None,
    )
    assert (sp["kind"], sp["status"], sp["start_ns"], sp["end_ns"]) == (
        "CLIENT",
        "ERROR: boom",
        5,
        7,
    )
    assert json.loads(sp["attributes"]) == {"n": 9007199254740993, "d": 2.5, "b": True, "new": None}


UNUSABLE = [
    (
        {"resourceSpans": [{"scopeSpans": [{"spans": [1, "x"]}]}]},
        "no usable spans: resourceSpans[0].scopeSpans[0].spans[0] is not an object",
    ),
    (
        {"resourceSpans": [1, {"scopeSpans": []}]},
        "no usable spans: resourceSpans[0] is not an object",
    ),
    (
        {"resourceSpans": [{"scopeSpans": "x"}]},
        "no usable spans: resourceSpans[0].scopeSpans is not a list",
    ),
    (
        {"resourceSpans": [{"instrumentationLibrarySpans": [None]}]},
        "no usable spans: resourceSpans[0].instrumentationLibrarySpans[0] is not an object",
    ),
    (
        {"resourceSpans": [{}, {"scopeSpans": [{}, {"spans": {"0": {}}}]}]},
        "no usable spans: resourceSpans[1].scopeSpans[1].spans is not a list",
    ),
    ({"resourceSpans": {}}, "resourceSpans is not a list"),  # its reason of old ({} read as empty)
]
"""OTLP/JSON requests whose entries are not objects (or lists), and the skip reason of each."""
EMPTY = [
    {"resourceSpans": []},
    {"resourceSpans": None},
    {"resourceSpans": [{}, {"scopeSpans": None}, {"scopeSpans": [{"spans": []}]}]},
]
"""Honestly empty requests (proto3 JSON: null is a repeated field's default, no entries)."""


def test_a_request_with_no_usable_span_is_a_named_skip(tmp_path: Path) -> None:
    """A request whose entries are not objects was counted as loaded, with no skip and no
    word; it is a skipped record naming the first such entry. An honestly empty request
    stays a record read with no span, and the totals add up."""
    good = json.loads((OTEL / "genai.jsonl").read_text().splitlines()[0])
    lines = [doc for doc, _ in UNUSABLE] + EMPTY + [good]
    path = _write(tmp_path / "junk.jsonl", lines)
    store, s = load(path)
    sk = rows(store, "SELECT record, reason FROM skipped ORDER BY record")
    assert [(r["record"], r["reason"]) for r in sk] == [
        (i, why) for i, (_, why) in enumerate(UNUSABLE, start=1)
    ]
    assert rows(store, "SELECT records, skipped FROM files") == [
        {"records": len(lines), "skipped": len(UNUSABLE)}
    ]
    loaded = rows(store, "SELECT DISTINCT record FROM spans")
    assert loaded == [{"record": len(lines)}] and s.spans > 0
    assert s.records == s.skipped + len(EMPTY) + len(loaded)


@pytest.mark.parametrize(("doc", "why"), UNUSABLE[:2])
def test_a_pretty_document_with_no_usable_span_is_a_named_skip(
    tmp_path: Path, doc: object, why: str
) -> None:
    """The same rule for a whole pretty-printed document (the general path alone)."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc, indent=2))
    store, _ = load(path)
    assert rows(store, "SELECT record, reason FROM skipped") == [{"record": 1, "reason": why}]
