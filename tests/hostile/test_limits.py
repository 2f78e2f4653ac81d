"""Every bound of ``Limits`` is settable and, when hit, costs only its record (or the rest of
its file), with the limit's name and value in the reason (issue 13)."""

from __future__ import annotations

import gzip
import json
from dataclasses import fields
from pathlib import Path

from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ingest.limits import DEFAULT, Limits

from .otlp import line, ok_line, request, sid, tid, tool_span


def _load(path: Path, limits: Limits) -> tuple[Store, object, list[tuple[int, str]]]:
    store = Store.open(None)
    s = ingest([path], store, limits=limits)
    skipped = store.con.execute("SELECT record, reason FROM skipped ORDER BY record").fetchall()
    return store, s, [(int(n), str(r)) for n, r in skipped]


def _loaded(store: Store) -> list[int]:
    rows = store.con.execute("SELECT DISTINCT record FROM spans ORDER BY 1").fetchall()
    return [int(r[0]) for r in rows]


def test_every_limit_is_described() -> None:
    """``describe`` names every field with its default (the documented list)."""
    names = [n for n, _, _ in DEFAULT.describe()]
    assert names == [f.name for f in fields(Limits)]
    assert all(v == getattr(DEFAULT, n) for n, v, _ in DEFAULT.describe())


def test_spans_per_trace(tmp_path: Path) -> None:
    """Trace 1 gets 2 spans per record; with a bound of 3, records 2 and 3 pass it."""
    p = tmp_path / "t.jsonl"
    recs = [
        line(request(*(tool_span(tid(1), sid(10 * r + k), "read", {"r": r}) for k in range(2))))
        for r in range(3)
    ]
    p.write_bytes(b"".join(recs) + ok_line(2))
    store, s, skipped = _load(p, Limits(spans_per_trace=3))
    assert skipped == [(2, "trace with more spans (limit spans_per_trace=3)"), (3, skipped[1][1])]
    assert _loaded(store) == [1, 4]
    assert (s.records, s.skipped, s.spans) == (4, 2, 3)  # type: ignore[attr-defined]
    (files_skipped,) = store.con.execute("SELECT skipped FROM files").fetchall()[0]
    assert files_skipped == 2


def test_record_bytes_line(tmp_path: Path) -> None:
    """A line over ``record_bytes`` is skipped; the lines around it load."""
    p = tmp_path / "t.jsonl"
    big = line(request(tool_span(tid(5), sid(5), "read", {"x": "y" * 5000})))
    p.write_bytes(ok_line(1) + big + ok_line(3))
    store, _, skipped = _load(p, Limits(record_bytes=4096))
    assert skipped == [(2, "line too large (limit record_bytes=4096)")]
    assert _loaded(store) == [1, 3]


def test_file_bytes(tmp_path: Path) -> None:
    """A gzip stream past ``file_bytes``: the lines before are kept, the rest listed once."""
    p = tmp_path / "t.jsonl.gz"
    body = b"".join(ok_line(i) for i in range(1, 201))
    p.write_bytes(gzip.compress(body))
    limit = len(body) // 2
    store, s, skipped = _load(p, Limits(file_bytes=limit))
    assert len(skipped) == 1 and f"(limit file_bytes={limit})" in skipped[0][1]
    n = len(_loaded(store))
    assert 0 < n < 200 and skipped[0][0] == n + 1
    assert s.records == n + 1  # type: ignore[attr-defined]


def test_attributes_and_messages(tmp_path: Path) -> None:
    """A span with too many attributes; a transcript run with too many messages."""
    span = tool_span(tid(1), sid(1), "read", {})
    span["attributes"] += [{"key": f"k{i}", "value": {"stringValue": "v"}} for i in range(10)]
    (tmp_path / "a.jsonl").write_bytes(line(request(span)) + ok_line(2))
    store, _, skipped = _load(tmp_path / "a.jsonl", Limits(attributes=5))
    assert skipped == [(1, "span with 13 attributes (limit attributes=5)")]
    assert _loaded(store) == [2]
    msgs = [{"role": "user", "content": "x"}] * 4
    (tmp_path / "b.json").write_text(json.dumps(msgs))
    _, _, skipped = _load(tmp_path / "b.json", Limits(messages=3))
    assert skipped == [(1, "run of 4 messages (limit messages=3)")]


def test_a_limit_no_setting_could_give_is_refused_in_python_too() -> None:
    """``--ingest-limit`` and YAML refuse values outside 1..2**53; a library caller's
    ``Limits(...)`` took them, and past 2**53 every record was skipped (OverflowError)."""
    import pytest

    for bad in (0, -1, (1 << 53) + 1, True, 1.5, "5"):
        with pytest.raises(ValueError, match=r"limit attributes="):
            Limits(attributes=bad)  # type: ignore[arg-type]
    assert Limits(attributes=1 << 53).attributes == 1 << 53
