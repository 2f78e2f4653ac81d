"""Every report format on the demo corpus, parsed back and checked against what was planted."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import duckdb
import jsonschema
import pytest

from tests.report.conftest import CONFIG, TRACES, demo, planted, run


def _contract_ids() -> set[str]:
    from sponsio_audit.config import load_config

    return {c.id for c in load_config(CONFIG).contracts}


def test_json_matches_schema_and_plants(demo_json: dict[str, Any]) -> None:
    schema = json.loads(files("sponsio_audit.report").joinpath("report.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(demo_json)
    assert demo_json["schema"] == "sponsio-audit/report/1"
    found = {(v["trace_id"], v["contract_id"]) for v in demo_json["violations"]}
    assert found == planted()
    clean_ids = {demo.trace_id(n) for n in demo.CLEAN}
    assert not clean_ids & {t for t, _ in found}
    assert {c["id"] for c in demo_json["contracts"]} == _contract_ids()
    s = demo_json["summary"]
    assert s["violations"] == len(planted())
    assert s["traces"] == sum(
        len(d) for d in (demo.SUPPORT_TRACES, demo.CODING_TRACES, demo.WORKFLOW_TRACES)
    )
    assert s["verdicts"]["violated"] == len(planted())
    skipped = demo_json["inputs"]["skipped"]
    assert [Path(x["path"]).name for x in skipped] == [demo.METRICS]


def test_json_blamed_tools_and_liveness(demo_json: dict[str, Any]) -> None:
    by_key = {(v["trace_id"], v["contract_id"]): v for v in demo_json["violations"]}
    for name, cid, tool in demo.PLANTED:
        v = by_key[(demo.trace_id(name), cid)]
        if tool:
            assert v["blamed"]["tool"] == tool
    loop = by_key[(demo.trace_id("coder-loop"), "coder.no_test_loop")]
    assert len(loop["offending"]) == demo.LOOP_N - 5 - 1  # every call past the 5th; one blamed
    live = by_key[(demo.trace_id("wf-no-factcheck"), "workflow.fact_check_drafts")]
    assert live["kind"] == "liveness" and live["opened_seq"] is not None


def test_parquet_read_back_with_duckdb(tmp_path: Path, demo_json: dict[str, Any]) -> None:
    pq = tmp_path / "pq"
    res = run("scan", TRACES, "-c", CONFIG, "--parquet", pq, "--quiet")
    assert res.exit_code == 1
    con = duckdb.connect()
    n_blamed = con.execute(
        f"SELECT count(*) FROM read_parquet('{pq / 'violations.parquet'}') WHERE blamed"
    ).fetchone()
    assert n_blamed == (len(planted()),)
    cols = {
        r[0]
        for r in con.execute(
            f"DESCRIBE SELECT * FROM read_parquet('{pq / 'violations.parquet'}')"
        ).fetchall()
    }
    assert {"trace_id", "contract_id", "seq", "blamed", "evidence", "path", "fingerprint"} <= cols
    n_events = con.execute(f"SELECT count(*) FROM read_parquet('{pq / 'events.parquet'}')")
    assert n_events.fetchone() == (demo_json["summary"]["events"],)
    n_verdicts = con.execute(
        f"SELECT count(*) FROM read_parquet('{pq / 'verdicts.parquet'}') WHERE verdict='violated'"
    ).fetchone()
    assert n_verdicts == (len(planted()),)


@pytest.mark.parametrize("fmt", ["json", "markdown", "html", "junit", "sarif"])
def test_report_rerenders_stored_audit(tmp_path: Path, fmt: str) -> None:
    """`report --db` renders what `scan --db` did, provenance (the scan's run) included."""
    a, b, db = tmp_path / "scan.out", tmp_path / "report.out", tmp_path / "a.duckdb"
    assert run("scan", TRACES, "-c", CONFIG, "--db", db, "-f", fmt, "-o", a).exit_code == 1
    res = run("report", "--db", db, "-f", fmt, "-o", b, "--fail-on", "high")  # scan's default
    assert res.exit_code == 1, res.output
    assert a.read_text() == b.read_text()


def test_report_without_audit_is_usage_error(tmp_path: Path) -> None:
    from sponsio_audit.ingest import Store

    db = tmp_path / "empty.duckdb"
    Store.open(db).close()
    res = run("report", "--db", db)
    assert res.exit_code == 2
    assert "scan --db" in res.stderr


def test_jobs_give_the_same_report(demo_json: dict[str, Any], tmp_path: Path) -> None:
    """`scan --jobs 2` (worker processes read the traces) reports exactly what one process does."""
    out = tmp_path / "jobs.json"
    res = run("scan", TRACES, "--contracts", CONFIG, "-f", "json", "-o", out, "--jobs", "2")
    assert res.exit_code == 1, res.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    for key in ("violations", "summary", "contracts", "inputs"):
        assert doc[key] == demo_json[key], key
