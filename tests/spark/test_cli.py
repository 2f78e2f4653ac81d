"""``scan --engine spark`` prints the report the default engine prints, from Parquet tables.

The real CLI (typer's runner, in this process, so it runs on the shared local
session): the demo corpus with its ``sponsio.yaml``; the JSON reports of the
two engines must be equal but for their provenance (when, which command), and
``report --parquet`` on Spark's directory must print it again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from typer.testing import CliRunner

from sponsio_audit.report import baseline
from tests.report.conftest import APP, CONFIG, REPO, TRACES, run


def _audit(path) -> str:
    """The JSON report without its provenance (which run, when, which command line): the
    audit itself must be the same text whichever engine made it."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc.pop("provenance", None)
    return json.dumps(doc, indent=2, ensure_ascii=False)


def test_scan_on_spark_prints_the_default_engines_json_report(spark, tmp_path):
    default = tmp_path / "default.json"
    on_spark = tmp_path / "spark.json"
    again = tmp_path / "again.json"
    res = run("scan", TRACES, "-c", CONFIG, "-f", "json", "-o", default)
    assert res.exit_code == 1, res.output  # high-severity violations planted
    res = run(
        "scan", TRACES, "-c", CONFIG, "-f", "json", "-o", on_spark,
        "--engine", "spark", "--spark-master", "local[2]", "--parquet", tmp_path / "pq",
    )  # fmt: skip
    assert res.exit_code == 1, res.output
    assert _audit(on_spark) == _audit(default)
    # Spark wrote each table as a directory of part files; the report reads them back
    assert (tmp_path / "pq" / "events.parquet").is_dir()
    assert run("report", "--parquet", tmp_path / "pq", "-f", "json", "-o", again).exit_code == 0
    assert _audit(again) == _audit(default)


INSTRUMENTED = REPO / "fixtures" / "instrumented"
PACK = REPO / "tests" / "instrumented" / "pack.yaml"
ROOT_ONLY = "ab" * 16


def _scan(*args: str | Path, stdin: bytes) -> Any:
    """The CLI with ``stdin`` as standard input."""
    runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
    return runner.invoke(APP, [str(a) for a in args], input=stdin, catch_exceptions=False)


def _fingerprints(directory: Path) -> list[tuple[str, str, str]]:
    rows = pq.read_table(directory / "violations.parquet").to_pylist()
    return sorted((r["contract_id"], r["trace_id"], r["fingerprint"]) for r in rows if r["blamed"])


def test_scan_on_spark_reads_logs_stdin_and_writes_the_default_fingerprints(spark, tmp_path):
    """Log records in another file than their spans, an empty trace given on standard input:
    the same JSON report, and ``violations.parquet`` with the same fingerprints (the matched
    argument included) as the default engine's."""
    corpus = tmp_path / "in"
    corpus.mkdir()
    for part in ("traces", "logs"):
        name = f"openai_v2_logs.{part}.jsonl.gz"
        shutil.copy(INSTRUMENTED / name, corpus / name)
    span = {"traceId": ROOT_ONLY, "spanId": "cd" * 8, "name": "GET /health",
            "startTimeUnixNano": "1000", "endTimeUnixNano": "2000"}  # fmt: skip
    stdin = (json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n").encode()
    common = ("scan", corpus, "-", "-c", PACK, "-f", "json")
    res = _scan(*common, "-o", tmp_path / "default.json", "--parquet", tmp_path / "pd", stdin=stdin)
    assert res.exit_code == 1, res.output  # the planted rm -rf, SSN, … (high)
    res = _scan(
        *common, "-o", tmp_path / "spark.json", "--parquet", tmp_path / "ps",
        "--engine", "spark", "--spark-master", "local[2]", stdin=stdin,
    )  # fmt: skip
    assert res.exit_code == 1, res.output
    default = _audit(tmp_path / "default.json")
    assert _audit(tmp_path / "spark.json") == default
    doc = json.loads(default)
    assert "-" in [f["path"] for f in doc["inputs"]["files"]]  # stdin is listed
    again = run("report", "--parquet", tmp_path / "ps", "-f", "json", "-o", tmp_path / "again.json")
    assert again.exit_code == 0, again.output
    assert _audit(tmp_path / "again.json") == default
    # the empty trace is in Spark's traces table, judged
    traces = pq.read_table(tmp_path / "ps" / "traces.parquet").to_pylist()
    assert {"trace_id": ROOT_ONLY, "events": 0} in traces
    verdicts = pq.read_table(tmp_path / "ps" / "verdicts.parquet").to_pylist()
    assert any(v["trace_id"] == ROOT_ONLY for v in verdicts)
    # fingerprints: the default engine's, and the rm -rf one holds what the regex matched
    assert _fingerprints(tmp_path / "ps") == _fingerprints(tmp_path / "pd")
    by_id = {c["id"]: c for c in pq.read_table(tmp_path / "ps" / "contracts.parquet").to_pylist()}
    rm = [
        r
        for r in pq.read_table(tmp_path / "ps" / "violations.parquet").to_pylist()
        if r["blamed"] and r["contract_id"] == "shell.no_rm_rf"
    ]
    assert rm, "the bash_rm scenario violates shell.no_rm_rf"
    for r in rm:
        c = by_id[r["contract_id"]]
        assert r["fingerprint"] == baseline.fingerprint({**r, "matched": "rm -rf"}, c)
        assert r["fingerprint"] != baseline.fingerprint(r, c)
