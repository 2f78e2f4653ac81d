"""``evaluate(events, config)``, the pure engine entry point, on inputs other producers send.

Issue 17 measured the old entry (``engine.columnar_raw``) giving wrong tables,
without an error, on: rows not sorted by (trace_id, seq), interleaved
traces, a trace split over two calls, ``trace_id`` not the first column,
``large_string`` / ``string_view`` columns, and contracts passed without
their permissions. Each test below feeds one of these to ``evaluate`` and
expects either the tables ``api.audit`` stores for the same events (the
path held to the hand-written expectations of ``test_handwritten``) or an
error that says what is wrong; never other tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import load_config
from tests.engine.test_handwritten import EXPECTED, HERE

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


def _stored(base: Path) -> tuple[Any, pa.Table, pa.Table, pa.Table]:
    cfg = load_config([base / "sponsio.yaml"])
    res = audit([base / "traces"], cfg)
    events = res.store.con.sql("SELECT * FROM events ORDER BY trace_id, seq").to_arrow_table()
    return cfg, events, res.verdicts, res.violations


@pytest.fixture(scope="module", params=["handwritten", "demo"])
def corpus(request: Any) -> tuple[Any, pa.Table, pa.Table, pa.Table]:
    """(config, events sorted by trace and seq, verdicts, violations) of ``api.audit``."""
    return _stored(HERE if request.param == "handwritten" else DEMO)


def _same(tables: Any, verdicts: pa.Table, violations: pa.Table) -> None:
    assert _rows(tables.verdicts) == _rows(verdicts)
    assert _rows(tables.violations) == _rows(violations)


def _batches(events: pa.Table, size: int) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(events.schema, events.to_batches(max_chunksize=size))


def test_sorted_table_and_tiny_batch_stream_give_the_stored_tables(corpus):
    from sponsio_audit import evaluate

    cfg, events, verdicts, violations = corpus
    _same(evaluate(events, cfg), verdicts, violations)
    # a stream of 7-row batches: traces span several batches and are stitched back
    _same(evaluate(_batches(events, 7), cfg), verdicts, violations)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shuffled_rows_give_the_same_tables(corpus, seed):
    """Problem 1: unsorted rows (every trace interleaved with others) in one table."""
    from sponsio_audit import evaluate

    cfg, events, verdicts, violations = corpus
    order = np.random.default_rng(seed).permutation(events.num_rows)
    _same(evaluate(events.take(pa.array(order)), cfg), verdicts, violations)


def test_interleaved_traces_in_a_stream_raise(corpus):
    """Problem 1: a stream cannot be sorted without reading it all: a trace that comes
    back after another trace started is an error, not a second trace of the same id."""
    from sponsio_audit import evaluate

    cfg, events, _, _ = corpus
    ids = events.column("trace_id").to_pylist()
    first = np.flatnonzero(np.array(ids) == ids[0])
    later = np.flatnonzero(np.array(ids) != ids[0])
    assert len(first) >= 2, "the first trace of the corpus has two events or more"
    # the first trace's first event, then every other trace, then the rest of the first
    order = np.r_[first[:1], later, first[1:]]
    stream = _batches(events.take(pa.array(order)), 1000)
    with pytest.raises(ValueError, match="interleaved"):
        evaluate(stream, cfg)


def test_a_trace_split_over_two_calls_raises(corpus):
    """Problem 1: the call that gets a trace's later events (seq not from 0) refuses them."""
    from sponsio_audit import evaluate

    cfg, events, _, _ = corpus
    ids = np.array(events.column("trace_id").to_pylist())
    rows = np.flatnonzero(ids == ids[0])
    cut = int(rows[len(rows) // 2])
    with pytest.raises(ValueError, match="split"):
        evaluate(events.slice(cut), cfg)


def test_a_gap_or_a_repeated_step_raises(corpus):
    from sponsio_audit import evaluate

    cfg, events, _, _ = corpus
    repeated = pa.concat_tables([events, events.slice(0, 1)])
    with pytest.raises(ValueError, match="split"):
        evaluate(repeated, cfg)
    with pytest.raises(ValueError, match="split"):
        evaluate(events.slice(1), cfg)  # the first trace without its step 0


def test_columns_are_found_by_name(corpus):
    """Problem 2: ``trace_id`` elsewhere than column 0 (the per-agent regrouping replaced
    column 0 by the trace key); extra columns are ignored."""
    from sponsio_audit import evaluate

    cfg, events, verdicts, violations = corpus
    reordered = events.select(list(reversed(events.column_names)))
    reordered = reordered.append_column("extra", pa.array(["x"] * events.num_rows))
    _same(evaluate(reordered, cfg), verdicts, violations)


def test_a_missing_column_is_named():
    from sponsio_audit import evaluate

    cfg, events, _, _ = _stored(HERE)
    with pytest.raises(ValueError, match="agent"):
        evaluate(events.drop_columns(["agent"]), cfg)


@pytest.mark.parametrize("string_type", [pa.large_string(), pa.string_view()])
def test_large_and_view_strings_give_the_same_tables(corpus, string_type):
    """Problem 3: the string types other Arrow producers (Spark, Polars, DuckDB) send."""
    from sponsio_audit import evaluate

    cfg, events, verdicts, violations = corpus
    schema = pa.schema(
        [
            pa.field(f.name, string_type if f.type == pa.string() else f.type, f.nullable)
            for f in events.schema
        ]
    )
    cast = events.cast(schema)
    _same(evaluate(cast, cfg), verdicts, violations)
    _same(evaluate(_batches(cast, 7), cfg), verdicts, violations)


def test_permissions_travel_with_the_config():
    """Problem 4: ``evaluate`` takes the loaded config, so the agents' permissions cannot
    be left behind; contracts alone are refused instead of judged without them."""
    from sponsio_audit import evaluate

    cfg = load_config([HERE / "sponsio.yaml"])
    res = audit([HERE / "traces"], cfg)
    events = res.store.con.sql("SELECT * FROM events ORDER BY trace_id, seq").to_arrow_table()
    [(t09,)] = res.store.con.sql(
        "SELECT DISTINCT e.trace_id FROM events e JOIN files f USING (file_id) "
        "WHERE f.path LIKE '%t09.jsonl'"
    ).fetchall()
    tables = evaluate(events, cfg)
    blamed = {
        (v["contract_id"], v["seq"])
        for v in tables.violations.to_pylist()
        if v["blamed"] and v["trace_id"] == t09
    }
    # carol wires without treasurer (3); the cfo holds it, so its wire (4) is no violation
    assert ("p_perm", 3) in blamed and ("p_perm", 4) not in blamed
    assert blamed == {(c, seq) for c, seq, _ in EXPECTED["t09"]}
    with pytest.raises(TypeError, match="permissions"):
        evaluate(events, cfg.contracts)


def test_no_events_or_no_contracts_give_empty_tables_of_the_right_schema():
    from sponsio_audit import evaluate
    from sponsio_audit.verdicts import VERDICT_SCHEMA, VIOLATION_SCHEMA

    cfg, events, _, _ = _stored(HERE)
    for tables in (evaluate(events.slice(0, 0), cfg), evaluate(events, _empty(cfg))):
        assert tables.verdicts.num_rows == tables.violations.num_rows == 0
        assert tables.verdicts.schema.equals(VERDICT_SCHEMA)
        assert tables.violations.schema.equals(VIOLATION_SCHEMA)


def _empty(cfg: Any) -> Any:
    from dataclasses import replace

    return replace(cfg, contracts=[])


def test_the_columnar_engine_finds_trace_id_by_name():
    """Problem 2 at its source: the per-agent regrouping replaced column 0 by its key."""
    from sponsio_audit.api import _contracts_and_permissions
    from sponsio_audit.engine import columnar_raw
    from sponsio_audit.verdicts import build_tables

    cfg, events, verdicts, violations = _stored(HERE)
    assert any(c.per_agent for c in cfg.contracts)
    contracts, perms = _contracts_and_permissions(cfg, None)
    reordered = events.select(list(reversed(events.column_names)))
    got = build_tables(columnar_raw(reordered, contracts, perms), reordered, contracts)
    assert _rows(got[0]) == _rows(verdicts)
    assert _rows(got[1]) == _rows(violations)
