"""The raw ``spans.attributes``/``resource`` JSON: written for a file store, NULL in memory.

Nothing in sponsio-audit reads those two columns; only a user's SQL on a
``--db`` file does. An in-memory store (``scan`` without ``--db``) skips
building them, and every other table is the same as with a file store.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from .conftest import OTEL, load, rows

BOTH = pytest.mark.parametrize("ext", [".jsonl", ".pb", ".pretty.json"])
OTHER_TABLES = ("events", "decisions", "traces", "span_facts", "files", "skipped")


@BOTH
def test_file_store_keeps_the_raw_json(ext: str, tmp_path: Path) -> None:
    store, _ = load(OTEL / f"genai{ext}", db=tmp_path / "t.duckdb")
    spans = rows(store, "SELECT name, attributes, resource FROM spans")
    assert spans and all(s["attributes"] is not None for s in spans)
    tool = next(s for s in spans if json.loads(s["attributes"]).get("gen_ai.tool.name"))
    assert json.loads(tool["attributes"])["gen_ai.operation.name"] == "execute_tool"
    assert json.loads(spans[0]["resource"])["service.name"] == "travel-svc"  # make_otel.FIXTURES


@BOTH
def test_memory_store_leaves_it_null_and_the_rest_equal(ext: str, tmp_path: Path) -> None:
    mem, s_mem = load(OTEL / f"genai{ext}")
    disk, s_disk = load(OTEL / f"genai{ext}", db=tmp_path / "t.duckdb")
    assert s_mem == s_disk
    assert rows(mem, "SELECT count(*) AS n FROM spans WHERE attributes IS NOT NULL") == [{"n": 0}]
    assert rows(mem, "SELECT count(*) AS n FROM spans WHERE resource IS NOT NULL") == [{"n": 0}]
    cols = "* EXCLUDE (attributes, resource)"
    assert rows(mem, f"SELECT {cols} FROM spans") == rows(disk, f"SELECT {cols} FROM spans")
    for table in OTHER_TABLES:
        sql = f"SELECT * FROM {table}"
        assert rows(mem, sql) == rows(disk, sql), table


def test_scan_parquet_keeps_the_raw_json(tmp_path: Path) -> None:
    """``scan --parquet`` without ``--db``: spans.parquet is for analysis, so it has the JSON."""
    from tests.report.conftest import CONFIG, TRACES, run

    pq = tmp_path / "pq"
    res = run("scan", TRACES, "-c", CONFIG, "--parquet", pq, "--quiet")
    assert res.exit_code == 1  # the demo's planted violations
    sql = "SELECT count(*), count(attributes), count(resource) FROM read_parquet(?)"
    n, attrs, resources = duckdb.connect().execute(sql, [str(pq / "spans.parquet")]).fetchone()
    assert n > 0 and attrs == n and resources == n
