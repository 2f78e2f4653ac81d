"""A store nothing reads after the audit writes no ``spans`` rows, and counts the same spans.

``scan`` without ``--db`` or ``--parquet`` audits into a store in memory that is gone
when the command ends; its ``spans`` rows were only ever counted (the summary's
``spans``, each input's ``spans`` in the provenance). ``audit(..., lean=True)``
leaves them out and counts ``span_facts``, which ingest writes one row per span for
its own use. Every count a user sees, and every other table, must be the same as with
the rows, on corpora that skip records, cut traces and hold logs beside spans.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sponsio_audit import audit
from sponsio_audit.config import load_config
from sponsio_audit.ingest.limits import Limits
from tests.conftest import fetched

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo"
HAND = REPO / "fixtures" / "handwritten"
CORPORA = {
    "demo": ([DEMO / "traces"], Limits()),
    "handwritten": ([HAND / "traces"], Limits()),  # session logs, native JSON: no spans
    "otel": ([REPO / "fixtures" / "otel"], Limits()),
    "instrumented": ([REPO / "fixtures" / "instrumented"], Limits()),
    # records cut after they were written (readback.spans_per_trace deletes their rows)
    "cut traces": ([DEMO / "traces", REPO / "fixtures" / "otel"], Limits(spans_per_trace=3)),
}
SAME_TABLES = ("files", "skipped", "span_facts", "events", "decisions", "traces", "contracts")


def _tables(result: object) -> set[str]:
    rows = result.store.con.execute("SELECT table_name FROM information_schema.tables")  # type: ignore[attr-defined]
    return {name for (name,) in rows.fetchall()}


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_without_spans_rows_every_count_and_table_is_the_same(name: str) -> None:
    paths, limits = CORPORA[name]
    cfg = load_config([DEMO / "sponsio.yaml"])
    kept = audit(paths, cfg, limits=limits, command=["t"])
    lean = audit(paths, cfg, limits=limits, command=["t"], lean=True)
    try:
        written = kept.store.count("spans")
        assert written > 0 or name == "handwritten"
        assert lean.store.count("spans") == 0
        assert lean.summary.spans == kept.summary.spans == written
        assert lean.summary == kept.summary
        per_file = [(i["path"], i["spans"]) for i in kept.provenance["inputs"]]
        assert [(i["path"], i["spans"]) for i in lean.provenance["inputs"]] == per_file
        assert sum(n for _, n in per_file) == written
        if name == "cut traces":
            assert kept.summary.skipped > 0  # the limit did cut records
        for table in ("verdicts", "violations"):  # kept by the lean result only
            assert table not in _tables(lean)
            assert lean.table(table).equals(kept.table(table)), table
        for table in SAME_TABLES:
            assert fetched(lean.store.con, f"SELECT * FROM {table}") == fetched(
                kept.store.con, f"SELECT * FROM {table}"
            ), table
    finally:
        kept.store.close()
        lean.store.close()


def test_a_lean_audit_refuses_its_spans_table_instead_of_an_empty_one() -> None:
    cfg = load_config([DEMO / "sponsio.yaml"])
    res = audit([DEMO / "traces"], cfg, lean=True)
    try:
        with pytest.raises(ValueError, match="lean=True"):
            res.table("spans")
        assert res.table("events").num_rows == res.summary.events > 0
    finally:
        res.store.close()


def test_scan_counts_the_same_spans_in_memory_as_in_a_database(tmp_path: Path) -> None:
    """The command: without ``--db`` (no spans rows) and with it, the same totals and inputs."""
    from tests.report.conftest import CONFIG, TRACES, run

    got = {}
    for where, extra in (("memory", []), ("db", ["--db", tmp_path / "a.duckdb"])):
        out = tmp_path / f"{where}.json"
        res = run("scan", TRACES, "-c", CONFIG, "-f", "json", "-o", out, "-q", *extra)
        assert res.exit_code == 1, res.output  # the demo's planted violations
        doc = json.loads(out.read_text())
        inputs = [(i["path"], i["spans"]) for i in doc["provenance"]["inputs"]]
        got[where] = (doc["summary"], inputs)
    assert got["memory"] == got["db"]
    assert got["memory"][0]["spans"] == 106  # fixtures/demo/README.md: the demo's spans
