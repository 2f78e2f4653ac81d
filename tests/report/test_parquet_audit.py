"""``scan --parquet DIR`` writes a whole audit; ``report --parquet DIR`` renders it again.

Issue 17, problem 5: the Parquet output held three tables (no files,
skipped, spans, decisions, contracts), so it could not be read back as an
audit, and the fingerprint column needed the report's contract data. Here
every report format rendered from the Parquet files must equal the one
rendered right after the scan, and every store table must be there with the
store's rows.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.report.conftest import CONFIG, TRACES, run

STORE_TABLES = ("files", "skipped", "spans", "events", "decisions", "verdicts", "violations")


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(parquet directory, DuckDB file) of one scan of the demo corpus."""
    d = tmp_path_factory.mktemp("pq")
    res = run("scan", TRACES, "-c", CONFIG, "--parquet", d / "out", "--db", d / "a.duckdb", "-q")
    assert res.exit_code == 1, res.output  # the demo plants high-severity violations
    return d / "out", d / "a.duckdb"


def test_every_store_table_is_written_with_the_store_rows(scanned):
    out, db = scanned
    con = duckdb.connect(str(db), read_only=True)
    for name in (*STORE_TABLES, "contracts"):
        table = pq.read_table(out / f"{name}.parquet")
        if name == "violations":
            table = table.drop_columns(["path", "fingerprint"])
        (n,) = con.execute(f'SELECT count(*) FROM "{name}"').fetchall()[0]
        assert table.num_rows == n, name
    assert pq.read_table(out / "files.parquet").num_rows == 4  # the demo's four files
    con.close()


@pytest.mark.parametrize("fmt", ["json", "markdown", "sarif", "junit"])
def test_report_from_parquet_equals_the_report_of_the_scan(scanned, tmp_path, fmt):
    out, db = scanned
    from_db = tmp_path / f"db.{fmt}"
    from_pq = tmp_path / f"pq.{fmt}"
    assert run("report", "--db", db, "-f", fmt, "-o", from_db).exit_code == 0
    assert run("report", "--parquet", out, "-f", fmt, "-o", from_pq).exit_code == 0
    assert from_pq.read_text(encoding="utf-8") == from_db.read_text(encoding="utf-8")


def test_fingerprints_are_those_of_the_scans_baseline(scanned, tmp_path):
    """The fingerprint column is made from the contracts table alone, and equals the
    fingerprints ``--write-baseline`` records from the report data."""
    from sponsio_audit.report import baseline

    out, _ = scanned
    base = tmp_path / "baseline.json"
    assert (
        run("scan", TRACES, "-c", CONFIG, "--write-baseline", base, "-q").exit_code == 0
    )  # --write-baseline exits 0 (issue 15)
    rows = pq.read_table(out / "violations.parquet").to_pylist()
    assert {r["fingerprint"] for r in rows if r["blamed"]} == baseline.read(base)
    assert all(r["fingerprint"] is None for r in rows if not r["blamed"])


def test_report_without_an_audit_in_the_directory_is_one_line(tmp_path):
    res = run("report", "--parquet", tmp_path)
    assert res.exit_code == 2
    assert "verdicts.parquet" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("table", ["verdicts", "violations", "contracts"])
def test_a_corrupt_or_cut_parquet_table_is_one_line(scanned, tmp_path, table):
    """A table cut short (a copy interrupted) or other bytes: one line naming the file, exit
    2 as for a bad store; before, a pyarrow traceback with exit 1 (the violations code)."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(scanned[0], copy)
    path = copy / f"{table}.parquet"
    path.write_bytes(path.read_bytes()[:300])
    res = run("report", "--parquet", copy)
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"{path}: not a table of an audit" in res.output
