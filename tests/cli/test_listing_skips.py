"""``traces`` and ``explain`` name the input records they skipped, as ``scan`` does.

Both read PATHs into an audit and list or explain what it holds; a record that
could not be read (invalid JSON, a span without a trace id, OTLP metrics) was
skipped without a word, so a listing with traces missing looked complete. Now
each skipped record is named on stderr (file, record, reason; the first
``SKIPPED_SHOWN``, then a count of the rest), stdout keeps only the listing, and
the exit code is unchanged. A stored audit (``--db``) says how many its scan
skipped. Expected lines come from the records written here, not from the tool.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sponsio_audit.cli.audited import SKIPPED_SHOWN
from tests.cli.conftest import REPO, cli

sys.path.insert(0, str(REPO / "fixtures"))
from make_otel import FixedIds, spans_request, to_json

TRACE = f"{(0xBEEF << 64) + 1:032x}"
PACK = ("--pack", "default")


def _good(path: Path) -> None:
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash"}
    trees = [{"name": "execute_tool bash", "attrs": tool, "start": 0, "end": 1}]
    req = spans_request(trees, "coder", FixedIds(trace_base=0xBEEF << 64))
    path.write_text(json.dumps(to_json(req)) + "\n")


NO_TRACE_ID = '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "no trace id"}]}]}]}\n'
"""An OTLP/JSON line (the file reads as OTLP) whose one span has no trace id: skipped."""


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


def test_traces_names_each_skipped_record_and_still_lists_the_rest(tmp_path: Path) -> None:
    _good(tmp_path / "good.jsonl")
    (tmp_path / "bad.jsonl").write_text(NO_TRACE_ID + "not json\n")
    (tmp_path / "notes.txt").write_text("hello\n")
    res = cli("traces", tmp_path, *PACK)
    assert res.exit_code == 0, res.stderr
    assert [line.split("\t")[0] for line in res.stdout.splitlines()[1:]] == [TRACE]
    got = _warnings(res.stderr)
    bad = str(tmp_path / "bad.jsonl")
    assert got[0].startswith(f"warning: {bad}: record 1: skipped: ")
    assert "traceId" in got[0]
    assert got[1].startswith(f"warning: {bad}: record 2: skipped: invalid JSON")
    assert got[2].startswith(f"warning: {tmp_path / 'notes.txt'}: skipped: unrecognised format")
    assert got[3].startswith("warning: 3 input record(s) skipped")
    assert len(got) == 4
    assert "warning" not in res.stdout


def test_many_skipped_records_are_named_up_to_a_cap_then_counted(tmp_path: Path) -> None:
    _good(tmp_path / "good.jsonl")
    n = SKIPPED_SHOWN + 3
    (tmp_path / "bad.jsonl").write_text(
        NO_TRACE_ID + "".join(f"broken {i}\n" for i in range(n - 1))
    )
    res = cli("traces", tmp_path, *PACK, "--format", "json")
    assert res.exit_code == 0, res.stderr
    assert [r["trace_id"] for r in json.loads(res.stdout)] == [TRACE]
    got = _warnings(res.stderr)
    named = [line for line in got if ": record " in line]
    assert [int(line.split(": record ")[1].split(":")[0]) for line in named] == list(
        range(1, SKIPPED_SHOWN + 1)
    )
    assert got[-1].startswith(f"warning: {n} input record(s) skipped")
    assert "3 more not shown" in got[-1]


def _one_bad(tmp_path: Path) -> None:
    """A good trace file and one with a single record to skip (record 1)."""
    _good(tmp_path / "good.jsonl")
    (tmp_path / "bad.jsonl").write_text(NO_TRACE_ID)


def _names_the_one_bad(tmp_path: Path, stderr: str) -> None:
    got = _warnings(stderr)
    assert got[0].startswith(f"warning: {tmp_path / 'bad.jsonl'}: record 1: skipped: ")
    assert got[-1].startswith("warning: 1 input record(s) skipped")


def test_explain_names_the_skipped_records_too(tmp_path: Path) -> None:
    _one_bad(tmp_path)
    res = cli("explain", tmp_path, *PACK, "--trace", TRACE)
    assert res.exit_code == 0, res.stderr
    _names_the_one_bad(tmp_path, res.stderr)


def test_a_stored_audit_says_what_its_scan_skipped(tmp_path: Path) -> None:
    _one_bad(tmp_path)
    db = tmp_path / "audit.duckdb"
    scan = cli("scan", tmp_path / "good.jsonl", tmp_path / "bad.jsonl", *PACK, "--db", db, "-q",
               "--fail-on", "none")  # fmt: skip
    assert scan.exit_code == 0, scan.stderr
    res = cli("traces", "--db", db)
    assert res.exit_code == 0, res.stderr
    _names_the_one_bad(tmp_path, res.stderr)


def test_nothing_skipped_nothing_said(tmp_path: Path) -> None:
    _good(tmp_path / "good.jsonl")
    res = cli("traces", tmp_path, *PACK)
    assert res.exit_code == 0, res.stderr
    assert _warnings(res.stderr) == []
