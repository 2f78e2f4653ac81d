"""Pass-1 events built from a chunk's own column lists equal those built from its Arrow rows.

``trace_tables.from_columns`` groups a chunk's Python lists by trace without the
Arrow → Python round trip; ``inchunk.table_events`` sorts the chunk's
``span_facts`` batch by (trace, position) and converts it, which is what pass 2
reads back. On random chunks (traces interleaved, rows without a trace id,
repeated span ids, parents absent, later or in cycles, any times, GenAI, agent,
tool and guard spans) both give the same events, decisions and trace rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest import Store, inchunk, ingest
from sponsio_audit.ingest.chunks import Decoded
from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.conventions import FACT_FIELDS, span_facts
from sponsio_audit.ingest.inchunk import table_events
from sponsio_audit.ingest.trace_tables import Traced, from_columns

from ..hostile.inputs import CASES, build

_CALLS = json.dumps(
    [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "search",
                                      "arguments": {"q": "x"}}]}]
)  # fmt: skip
SPANS = st.sampled_from(
    [
        ("invoke_agent a", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}),
        ("invoke_agent b", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "b",
                            "gen_ai.conversation.id": "conv"}),
        ("chat m", {"gen_ai.operation.name": "chat", "gen_ai.output.messages": _CALLS}),
        ("chat m", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3}),
        ("execute_tool search", {"gen_ai.operation.name": "execute_tool",
                                 "gen_ai.tool.name": "search", "gen_ai.tool.call.id": "c1"}),
        ("execute_tool t", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t",
                            "gen_ai.tool.call.arguments": '{"a": 1}'}),
        ("sponsio.agent_turn", {"sponsio.agent_id": "g", "sponsio.event.tool": "t"}),
        ("sponsio.contract_check", {"sponsio.contract.id": "c"}),
        ("sponsio.violation", {"sponsio.violation.evidence": "e"}),
        ("sponsio.enforcement", {"sponsio.enforcement.action": "block"}),
        ("GET", {"http.request.method": "GET"}),
    ]
)  # fmt: skip
IDS = st.sampled_from(["s0", "s1", "s2", "s3", "s4", "s5", None])
TIMES = st.one_of(st.none(), st.integers(-5, 20))
ROW = st.tuples(st.sampled_from(["t1", "t2", "t3", None]), IDS, IDS, TIMES, TIMES, SPANS)


def _columns(rows: list[tuple[Any, ...]]) -> Columns:
    cols = Columns(file_id=7, run=1)
    c = cols.cols
    for k, (tid, sid, pid, start, end, (name, attrs)) in enumerate(rows):
        cols.facts.append(span_facts(name, attrs))
        for key, v in (("trace_id", tid), ("span_id", sid), ("parent_span_id", pid),
                       ("start_ns", start), ("end_ns", end), ("service", "svc"),
                       ("record", 1 + k // 3), ("name", name), ("kind", "0"),
                       ("status", "UNSET"), ("scope", None), ("attributes", None),
                       ("resource", None)):  # fmt: skip
            c[key].append(v)
    return cols


@settings(max_examples=300, deadline=None)
@given(st.lists(ROW, max_size=25))
def test_events_from_the_lists_equal_events_from_the_arrow_rows(rows: list[tuple]) -> None:
    cols = _columns(rows)
    _, facts = cols.batches()
    got, want = from_columns(cols), table_events(facts)
    assert got.traces == want.traces == len({r[0] for r in rows} - {None})
    assert got.events.to_pylist() == want.events.to_pylist()
    assert got.decisions.to_pylist() == want.decisions.to_pylist()
    assert got.counts is not None and want.counts is not None
    assert got.counts.to_pylist() == want.counts.to_pylist()
    assert got.spans is not None and want.spans is not None
    assert got.spans.to_pylist() == want.spans.to_pylist()


HOSTILE = ("lone_surrogate", "int64_overflow", "xml_illegal", "markup", "odd_attribute_types",
           "huge_attribute", "invalid_utf8", "deep_nesting", "many_attributes",
           "broken_json_lines", "mixed_signals", "nul_prefix", "truncated_protobuf")  # fmt: skip


def _typed(values: list[Any]) -> list[tuple[type, Any]]:
    return [(type(v), v) for v in values]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_chunks_lists_hold_the_values_its_store_rows_read_back(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``from_columns`` reads the lists as pass 2 reads the stored rows: every value the
    decoders and conventions put in a chunk's lists (lone surrogates, integers beyond int64,
    odd attribute types, …) is one its Arrow column holds as is (``store._fit`` changes
    nothing), checked on every chunk of a real ingest of hostile inputs (a spy)."""
    case = next(c for c in CASES if c.name == name)
    build(case, tmp_path / "in")
    seen: list[int] = []
    real = inchunk.chunk_events

    def spy(d: Decoded) -> Traced:
        assert d.columns is not None
        c, facts = d.columns, d.facts
        for k in ("trace_id", "span_id", "parent_span_id", "start_ns", "end_ns", "service"):
            assert _typed(c.cols[k]) == _typed(facts.column(k).to_pylist()), k
        fact_cols = list(zip(*c.facts, strict=True)) if c.facts else [()] * len(FACT_FIELDS)
        for k, col in zip(FACT_FIELDS, fact_cols, strict=True):
            assert _typed(list(col)) == _typed(facts.column(k).to_pylist()), k
        seen.append(facts.num_rows)
        return real(d)

    monkeypatch.setattr(inchunk, "chunk_events", spy)
    ingest([tmp_path / "in"], Store.open(None))
    assert seen and sum(seen) > 0
