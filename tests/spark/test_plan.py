"""The Spark driver cuts a JSON-lines file into ranges by one rule: a range starts right
after the first line end at or past ``range_bytes`` from its own start (so every line lies
in one range), and its records are numbered by the file's lines. Tasks number the
``files``/``skipped`` rows and every record by this plan, so a range cut one byte off or a
line count off by one misnumbers records against the store ingest. Runs without a JVM."""

from __future__ import annotations

import zlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import unavailable

REPO = Path(__file__).resolve().parents[2]
LINES = (REPO / "fixtures" / "otel" / "genai.jsonl").read_bytes().splitlines(keepends=True)


def _by_the_rule(body: bytes, range_bytes: int) -> list[tuple[int, int, int]]:
    """(start, end, first line number) of each range, from the rule in the module doc."""
    out, start = [], 0
    while start < len(body):
        nl = body.find(b"\n", start + range_bytes)
        end = len(body) if nl < 0 else nl + 1
        out.append((start, end, body.count(b"\n", 0, start) + 1))
        start = end
    return out


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.integers(0, len(LINES) - 1), min_size=1, max_size=40),
    blank=st.lists(st.booleans(), min_size=40, max_size=40),
    range_bytes=st.integers(1, 6_000),
    tail=st.booleans(),
)
def test_the_plan_cuts_a_json_lines_file_at_line_ends_by_the_rule(
    tmp_path_factory, picks: list[int], blank: list[bool], range_bytes: int, tail: bool
) -> None:
    try:
        from sponsio_audit.spark import plan
    except ImportError as e:
        unavailable(f"pyspark is not installed ({e}); pip install -e '.[spark]'")
    lines = [LINES[i] + (b"\n" if b else b"") for i, b in zip(picks, blank, strict=False)]
    body = b"".join(lines)
    body = body if tail else body.rstrip(b"\n")  # a last line with or without its newline
    path = tmp_path_factory.mktemp("plan") / "spans.jsonl"
    path.write_bytes(body)

    got = plan.plan([str(path)], range_bytes=range_bytes)

    assert got.skipped == [] and got.files == []
    assert [(u.start, u.end, u.first) for u in got.units] == _by_the_rule(body, range_bytes)
    assert all(u.size == len(body) and u.file_id == 1 for u in got.units)
    # each range's CRC-32, which its task checks before it reads (files.unchanged)
    assert [u.crc for u in got.units] == [zlib.crc32(body[u.start : u.end]) for u in got.units]


def test_empty_files_are_each_empty_not_duplicates(tmp_path: Path) -> None:
    try:
        from sponsio_audit.spark import plan
    except ImportError as e:
        unavailable(f"pyspark is not installed ({e}); pip install -e '.[spark]'")
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        (tmp_path / name).write_bytes(b"")
    got = plan.plan([str(tmp_path)])
    assert got.duplicates == 0
    assert [reason for _, _, reason in got.skipped] == ["empty file"] * 3
