"""Pass-1 events (traces whole in one chunk, built in the worker) equal pass 2's, row for row.

A trace's events must not depend on where they were computed: in the chunk's
worker (``inchunk``, kept by ``staging.Stage``) or read back from the store
(``readback``). Each fixture request is split into one line per span, so that
with one-record chunks every multi-span trace crosses chunks (pass 2) and with
the default chunk size every trace lies in one chunk (pass 1); every table,
in insertion order, must be the same. Line ranges read by workers number
lines as a reading of the whole file does.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ingest import Store, chunks, ingest, staging
from sponsio_audit.ingest.chunks import Traced
from sponsio_audit.ingest.limits import Limits
from sponsio_audit.ingest.line_ranges import LineIndex, range_records
from sponsio_audit.ingest.sniff import raw_lines
from sponsio_audit.ingest.tables import TABLES
from tests.conftest import fetched

from .conftest import OTEL, make_otel, split_trace


def _one_span_per_line(src: Path, dst: Path) -> int:
    """Rewrite an OTLP/JSON-lines file with each span in a request of its own; spans count."""
    out, n = [], 0
    for line in src.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    one = {**rs, "scopeSpans": [{**ss, "spans": [span]}]}
                    out.append(json.dumps({"resourceSpans": [one]}))
                    n += 1
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")
    return n


def _kept(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record what each ``Stage.settle`` kept (a spy: the real method runs)."""
    seen: list[int] = []
    real = staging.Stage.settle

    def settle(self: staging.Stage, sole: bool = False) -> int:
        seen.append(real(self, sole))
        return seen[-1]

    monkeypatch.setattr(staging.Stage, "settle", settle)
    return seen


def _all(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every table in insertion order (no ORDER BY)."""
    return {t: fetched(store.con, f"SELECT * FROM {t}") for t in TABLES}


def _run(paths: list[Path], limits: Limits | None = None) -> tuple[Any, dict[str, Any]]:
    store = Store.open(None)
    s = ingest(paths, store, limits=limits or Limits())
    return s, _all(store)


def test_pass_one_and_pass_two_give_the_same_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spans = sum(_one_span_per_line(p, tmp_path / p.name) for p in OTEL.glob("*.jsonl"))
    kept = _kept(monkeypatch)
    whole, want = _run([tmp_path])  # default chunks: each file is one chunk
    assert whole.spans == spans and whole.events > 20 and want["decisions"]
    assert kept[-1] == whole.traces >= 7  # every trace built in pass 1
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1)  # one record per chunk
    for hold in (staging.HOLD_BYTES, 1):  # staged events in memory, or all in temp tables
        monkeypatch.setattr(staging, "HOLD_BYTES", hold)
        cut, got = _run([tmp_path])
        assert kept[-1] < whole.traces  # multi-span traces went through pass 2
        assert cut == whole
        for t in TABLES:
            assert got[t] == want[t], (hold, t)


def test_a_later_run_adding_spans_to_a_trace_replaces_its_pass_one_events(
    tmp_path: Path,
) -> None:
    """Run 1 sees the tool span alone (a whole trace then); run 2 brings its agent span."""
    tool, agent = split_trace(tmp_path, ("tool.jsonl", "agent.jsonl"), "boss", "svc", 0x9A55 << 64)
    store = Store.open(None)
    ingest([tool], store)
    first = store.con.execute("SELECT type, agent, tool FROM events").fetchall()
    assert first == [("tool_call", "svc", "t")]  # no agent span yet: the service name
    ingest([agent], store)
    after = store.con.execute("SELECT type, agent, tool FROM events ORDER BY seq").fetchall()
    assert after == [("tool_call", "boss", "t")]  # the agent span's name now, once
    assert store.con.execute("SELECT count(*) FROM traces").fetchall() == [(1,)]


def test_a_trace_split_between_a_document_and_a_lines_file_is_read_whole(
    tmp_path: Path,
) -> None:
    """A fresh store, one run: the agent span in a pretty-printed OTLP document (not staged by
    pass 1), the tool span in a JSON-lines file (staged, alone in its chunk). The tool span's
    trace is not whole there: its event names the agent from the document's span."""
    _tool, agent = split_trace(tmp_path, ("tool.jsonl", "agent.jsonl"), "boss", "svc", 0x9A56 << 64)
    agent.with_suffix(".json").write_text(json.dumps(json.loads(agent.read_text()), indent=2))
    agent.unlink()
    store = Store.open(None)
    s = ingest([tmp_path], store)
    assert (s.spans, s.traces) == (2, 1)
    got = store.con.execute("SELECT type, agent, tool FROM events").fetchall()
    assert got == [("tool_call", "boss", "t")]  # not the service name: the agent span was read


def test_a_record_removed_by_spans_per_trace_is_not_in_the_trace_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trace over ``spans_per_trace`` keeps the events of its first records only, even
    though its worker built events from all its spans (pass 1) before the cap."""
    tree = {
        "name": "invoke_agent a",
        "attrs": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"},
        "start": 0,
        "end": 99,
        "children": [
            {
                "name": f"execute_tool t{k}",
                "attrs": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": f"t{k}"},
                "start": 1 + k,
                "end": 2 + k,
            }
            for k in range(5)
        ],
    }
    doc = make_otel.to_json(make_otel.spans_request([tree], "svc"))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]  # tools t0..t4, then the agent
    lines = []
    for part in (spans[:3], spans[3:]):
        doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = part
        lines.append(json.dumps(doc))
    capped = tmp_path / "capped" / "t.jsonl"
    capped.parent.mkdir()
    capped.write_text("\n".join(lines) + "\n")
    first = tmp_path / "first" / "t.jsonl"
    first.parent.mkdir()
    first.write_text(lines[0] + "\n")
    kept = _kept(monkeypatch)
    s, got = _run([capped], Limits(spans_per_trace=4))
    assert kept == [0] and s.skipped == 1  # record 2 removed: its trace was not kept whole
    _, want = _run([first])
    assert [e[5] for e in got["events"]] == ["t0", "t1", "t2"]  # by hand: record 1's tools
    assert got["events"] == want["events"] and got["traces"] == want["traces"]


LINES = st.lists(
    st.sampled_from([b"", b"  ", b"\x00\x00{}", b'{"a": 1}', b"x" * 30, b"\r", b"{}\x00"]),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(
    lines=LINES,
    trailing=st.booleans(),
    every=st.integers(1, 40),
    block=st.integers(1, 17),
)
def test_line_ranges_read_the_records_of_the_whole_file(
    lines: list[bytes], trailing: bool, every: int, block: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing and lines else b"")
    limits = Limits(record_bytes=20)  # the 30-byte lines are too large
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "f.jsonl")
        Path(path).write_bytes(data)
        index = LineIndex(every)
        for at in range(0, len(data), block):
            index.add(data[at : at + block])
        got = [
            rec
            for offset, length, first in index.ranges()
            for rec in range_records(path, offset, length, first, limits)
        ]
        want = list(raw_lines(lambda: open(path, "rb"), limits))  # noqa: SIM115
    assert index.size == len(data)
    assert [(no, str(r)) for no, r in got] == [(no, str(r)) for no, r in want]


def _traced(ids: list[str]) -> Traced:
    """One event (seq 0) for each trace of ``ids``, each trace of one span."""
    n = len(ids)
    cols = {f.name: pa.nulls(n, f.type) for f in EVENT_SCHEMA}
    cols.update(trace_id=pa.array(ids), seq=pa.array([0] * n), type=pa.array(["llm_call"] * n))
    events = pa.record_batch(list(cols.values()), schema=EVENT_SCHEMA)
    counts = pa.record_batch([pa.array(ids), pa.array([1] * n)], schema=TABLES["traces"])
    return Traced(n, events, TABLES["decisions"].empty_table(), counts, pa.array([1] * n))


def test_publish_writes_the_events_held_then_whatever_was_sorted_ahead() -> None:
    """``Stage.presort`` sorts the events held after pass 1 on a thread; ``publish`` must
    write what the stage holds when it publishes: not the events of a trace ``settle``
    dropped (trace b has a second span elsewhere), and the events staged after the sort."""
    store = Store.open(None)
    stage = staging.Stage.open(store, 1000)
    stage.add(_traced(["c", "b"]))
    stage.add(_traced(["a"]))
    store.con.execute("INSERT INTO span_facts (trace_id) VALUES ('a'), ('b'), ('b'), ('c')")
    stage.presort()
    assert stage.settle() == 2
    stage.add(_traced(["b"]))  # pass 2's events of b, from both its spans
    assert stage.publish() == 3
    assert store.con.execute("SELECT trace_id FROM events").fetchall() == [("a",), ("b",), ("c",)]
    stage = staging.Stage.open(store, 1000)
    stage.add(_traced(["e", "d"]))
    store.con.execute("INSERT INTO span_facts (trace_id) VALUES ('d'), ('e')")
    stage.presort()
    assert stage.settle() == 2 and stage.publish() == 2
    got = store.con.execute("SELECT trace_id FROM events").fetchall()
    assert got == [("a",), ("b",), ("c",), ("d",), ("e",)]
    stage = staging.Stage.open(store, 1000)  # f dropped, and nothing staged after
    stage.add(_traced(["g", "f"]))
    store.con.execute("INSERT INTO span_facts (trace_id) VALUES ('f'), ('f'), ('g')")
    stage.presort()
    assert stage.settle() == 1 and stage.publish() == 1
    assert store.con.execute("SELECT trace_id FROM events").fetchall()[5:] == [("g",)]
