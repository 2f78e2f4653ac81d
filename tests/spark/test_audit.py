"""``sponsio_audit.spark.audit`` in local mode gives ``api.audit``'s tables, row for row.

The session sends Arrow batches of 7 rows (``conftest``), so most traces are
cut over several batches of one ``mapInArrow`` call; the input DataFrames are
shuffled (rows in random order, spread over several partitions) before
``audit`` regroups them. The expected tables are ``api.audit``'s, the path
held to hand-written expectations (``tests/engine/test_handwritten.py``) and
to the reference engine (``tests/engine/test_engines.py``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import AgentConfig, Config, load_config
from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ingest import Store
from tests.engine.test_engines import CONTRACTS, PERMS
from tests.engine.test_handwritten import HERE

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


def _shuffled(spark: Any, events: pa.Table, seed: int) -> Any:
    order = np.random.default_rng(seed).permutation(events.num_rows)
    return spark.createDataFrame(events.take(pa.array(order))).repartition(3)


def _check(
    spark: Any,
    events: pa.Table,
    cfg: Any,
    verdicts: pa.Table,
    violations: pa.Table,
    traces: pa.Table | None = None,
):
    from sponsio_audit import spark as spark_audit

    listed = None if traces is None else spark.createDataFrame(traces)
    got_v, got_x = spark_audit.audit(_shuffled(spark, events, 7), cfg, traces=listed)
    assert _rows(got_v.toArrow()) == _rows(verdicts)
    assert _rows(got_x.toArrow()) == _rows(violations)


@pytest.mark.parametrize("base", [HERE, DEMO], ids=["handwritten", "demo"])
def test_fixtures_give_the_tables_of_api_audit(spark, base):
    cfg = load_config([base / "sponsio.yaml"])
    res = audit([base / "traces"], cfg)
    events = res.table("events")
    assert res.violations.num_rows > 0  # the fixtures plant violations
    _check(spark, events, cfg, res.verdicts, res.violations)


def _generated(n: int, seed: int) -> pa.Table:
    """``n`` traces of 0..12 events: tool calls (args present or missing) and LLM responses
    by two agents, as in ``test_engines``, from a seeded generator."""
    rnd = random.Random(seed)
    tools = ["check", "refund", "notify", "login", "bash", "mcp__x__Refund"]
    argss = [None, {}, {"cmd": "ls /work/a"}, {"cmd": "rm -rf /"}, {"path": "/etc/passwd"}]
    rows = []
    for t in range(n):
        for seq in range(rnd.randint(0, 12)):
            row: dict[str, Any] = {f.name: None for f in EVENT_SCHEMA}
            agent = rnd.choice(["bot", "helper"])
            row.update(trace_id=f"g{t:04d}", seq=seq, agent=agent, inferred=False)
            row.update(span_id=f"s{t}.{seq}", file_id=1, record=t)
            if rnd.random() < 0.75:
                args = rnd.choice(argss)
                row.update(
                    type="tool_call",
                    tool=rnd.choice(tools),
                    args=None if args is None else json.dumps(args),
                )
            else:
                row.update(
                    type="llm_response",
                    tokens_total=rnd.choice([None, 5, 20, 40]),
                    content=rnd.choice([None, "fine", "ssn 123-45-6789", ""]),
                )
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)


def test_two_hundred_generated_traces_give_the_tables_of_api_audit(spark):
    """Traces of 0 events too: listed in a ``traces`` table, judged by both as length 0."""
    events = _generated(200, seed=17)
    counts = {f"g{t:04d}": 0 for t in range(200)}
    for trace_id in events.column("trace_id").to_pylist():
        counts[trace_id] += 1
    traces = pa.table(
        {"trace_id": list(counts), "events": pa.array(list(counts.values()), pa.int64())}
    )
    empty = [t for t, n in counts.items() if n == 0]
    assert len(empty) >= 5  # randint(0, 12): about 1 trace in 13
    cfg = Config(
        contracts=list(CONTRACTS),
        agents={a: AgentConfig(a, tuple(sorted(p))) for a, p in PERMS.items()},
    )
    store = Store.open()
    store.insert("events", events)
    store.insert("traces", traces)
    res = audit(store, cfg)
    assert res.summary.traces == 200 and res.summary.verdicts["violated"] > 0
    judged = {r["trace_id"] for r in res.verdicts.to_pylist()}
    assert set(empty) <= judged
    _check(spark, events, cfg, res.verdicts, res.violations, traces)


def test_contracts_without_permissions_or_columns_are_refused(spark):
    from sponsio_audit import spark as spark_audit

    cfg = load_config([HERE / "sponsio.yaml"])
    events = audit([HERE / "traces"], cfg).table("events")
    df = spark.createDataFrame(events)
    with pytest.raises(TypeError, match="permissions"):
        spark_audit.audit(df, cfg.contracts)
    with pytest.raises(ValueError, match="agent"):
        spark_audit.audit(df.drop("agent"), cfg)


def test_events_without_the_shared_prompt_columns_are_audited(spark):
    """Events from another producer that never shares a prompt may leave out
    ``prompt_from``/``prompt_chars`` (``event.OPTIONAL_COLUMNS``), as ``evaluate`` allows:
    the same tables as with the columns."""
    from sponsio_audit import spark as spark_audit
    from sponsio_audit.event import OPTIONAL_COLUMNS

    cfg = load_config([HERE / "sponsio.yaml"])
    res = audit([HERE / "traces"], cfg)
    events = res.table("events")
    assert all(c in events.column_names for c in OPTIONAL_COLUMNS)
    bare = spark.createDataFrame(events.drop_columns(list(OPTIONAL_COLUMNS)))
    got_v, got_x = spark_audit.audit(bare, cfg)
    assert _rows(got_v.toArrow()) == _rows(res.verdicts)
    assert _rows(got_x.toArrow()) == _rows(res.violations)


def test_the_configs_regex_time_limit_applies_in_the_executors(spark, tmp_path):
    """``regex_timeout_ms: 1`` makes a search of a few ms run out of time (SEMANTICS.md
    §5: unknown there, so unverifiable) on Spark as in ``api.audit``; under the 100 ms
    default the executors would decide it and the engines would disagree."""
    from sponsio_audit import spark as spark_audit
    from tests.engine.test_regex_timeouts import YAML

    cfg_file = tmp_path / "sponsio.yaml"
    cfg_file.write_text(YAML, encoding="utf-8")
    line = {"ts": 1.0, "agent_id": "bot", "action": "bash", "constraint": "x",
            "result": "allowed", "args": {"cmd": "a" * 13 + "!"}}  # fmt: skip
    log = tmp_path / "20260101_000000_1.jsonl"
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    cfg = load_config([cfg_file])
    res = audit([log], cfg)
    assert {r["contract_id"]: r["verdict"] for r in res.verdicts.to_pylist()} == {
        "slow": "unverifiable",
        "quick": "pass",
    }
    got_v, got_x = spark_audit.audit(spark.createDataFrame(res.table("events")), cfg)
    assert _rows(got_v.toArrow()) == _rows(res.verdicts)
    assert _rows(got_x.toArrow()) == _rows(res.violations)
