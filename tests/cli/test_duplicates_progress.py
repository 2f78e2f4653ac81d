"""A duplicate input file is listed with its reason; the progress bar shows only on a terminal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.conftest import CONFIG, TRACES, cli, pty_run

SUPPORT = TRACES / "support_bot.otlp.jsonl"


def test_duplicate_file_is_listed_in_inputs(tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copy(SUPPORT, copy)
    res = cli("scan", SUPPORT, copy, "-c", CONFIG, "-f", "json", "--fail-on", "none")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    files = {f["path"]: f for f in doc["inputs"]["files"]}
    assert files[str(copy)]["format"] == "duplicate"
    reasons = [s["reason"] for s in doc["inputs"]["skipped"] if s["path"] == str(copy)]
    assert reasons == [f"duplicate of {SUPPORT} (same sha256), not read again"]
    # records read = events + skipped still adds up; a duplicate alone does not fail --strict
    strict = cli(
        "scan", SUPPORT, copy, "-c", CONFIG, "--agent", "support_bot", "-q", "--strict",
        "--fail-on", "none",
    )  # fmt: skip
    assert strict.exit_code == 0


def test_no_progress_when_piped() -> None:
    res = cli("scan", TRACES, "-c", CONFIG, "-o", "/dev/null", "-f", "json")
    assert res.stderr.splitlines()[0].startswith("scanned ")
    assert "spans/s" not in res.stderr


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    out = pty_run(["scan", str(TRACES), "-c", str(CONFIG), "-o", str(tmp_path / "a.json")], 160)
    assert "spans/s" in out and "files" in out, out
    assert "scanned 4 files" in out
