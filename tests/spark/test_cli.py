"""``scan --engine spark`` prints the report the default engine prints, from Parquet tables.

The real CLI (typer's runner, in this process, so it runs on the shared local
session): the demo corpus with its ``sponsio.yaml``; the JSON reports of the
two engines must be equal but for their provenance (when, which command), and
``report --parquet`` on Spark's directory must print it again.
"""

from __future__ import annotations

import json

from tests.report.conftest import CONFIG, TRACES, run


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
