"""``scan --engine spark`` prints the report the default engine prints, from Parquet tables.

The real CLI (typer's runner, in this process, so it runs on the shared local
session): the demo corpus with its ``sponsio.yaml``; the JSON reports of the
two engines must be equal byte for byte, and ``report --parquet`` on Spark's
directory must print it again.
"""

from __future__ import annotations

from tests.report.conftest import CONFIG, TRACES, run


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
    assert on_spark.read_text(encoding="utf-8") == default.read_text(encoding="utf-8")
    # Spark wrote each table as a directory of part files; the report reads them back
    assert (tmp_path / "pq" / "events.parquet").is_dir()
    assert run("report", "--parquet", tmp_path / "pq", "-f", "json", "-o", again).exit_code == 0
    assert again.read_text(encoding="utf-8") == default.read_text(encoding="utf-8")
