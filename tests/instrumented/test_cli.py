"""``sponsio-audit scan --parquet`` on spans read without their log records: the real CLI
writes a reason into ``verdicts.reason`` for every verdict that is not pass or violated."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from sponsio_audit.cli import app

from .conftest import FIX, PACK


def test_parquet_verdicts_carry_a_reason_for_every_unverifiable(tmp_path: Path) -> None:
    out = tmp_path / "pq"
    args = ["scan", str(FIX / "openai_v2_nocontent.traces.pb.gz"), "--contracts", str(PACK)]
    result = CliRunner().invoke(app, [*args, "--parquet", str(out), "-q"])
    assert result.exit_code == 1, result.output  # the token budget is broken: a violation
    rows = pq.read_table(out / "verdicts.parquet").to_pylist()
    assert len(rows) == 9 * 5  # every trace, the one without events too, x every contract
    open_ = [r for r in rows if r["verdict"] not in ("pass", "violated")]
    assert open_ and all(r["verdict"] == "unverifiable" for r in open_)
    for r in open_:
        assert " unknown at step " in r["reason"], r
        assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in r["reason"], r
    assert all(r["reason"] is None for r in rows if r["verdict"] in ("pass", "violated"))
