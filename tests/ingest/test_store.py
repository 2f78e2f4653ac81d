"""Persistence, dedup by content, re-grouping when a later file adds spans, schema."""

from __future__ import annotations

import shutil
from pathlib import Path

from sponsio_audit.event import EVENT_SCHEMA
from sponsio_audit.ingest import Store, ingest

from .conftest import OTEL, events, make_otel, rows


def test_persisted_db_does_not_duplicate(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("genai.jsonl", "openllmetry.pb", "sponsio.pb"):
        shutil.copy(OTEL / name, data / name)
    db = tmp_path / "audit.duckdb"
    store = Store.open(db)
    first = ingest([data], store)
    assert (first.files, first.spans, first.events, first.duplicates) == (3, 16, 11, 0)
    store.close()

    store = Store.open(db)
    again = ingest([data, data / "genai.jsonl"], store)
    # nothing is read again; each duplicate is listed as a file skipped with its reason
    assert (again.files, again.spans, again.events, again.duplicates) == (4, 0, 0, 4)
    counts = {t: store.count(t) for t in ("files", "spans", "events", "decisions", "skipped")}
    assert counts == {"files": 7, "spans": 16, "events": 11, "decisions": 2, "skipped": 4}
    reasons = [r[0] for r in store.con.execute("SELECT reason FROM skipped").fetchall()]
    assert all(r.startswith("duplicate of ") for r in reasons)
    store.close()


def test_later_file_extends_a_trace(tmp_path: Path) -> None:
    tree = make_otel._genai()[0]
    first = dict(tree, children=tree["children"][:2])
    ids = make_otel.FixedIds(0xABC << 64, 0x100)
    make_otel.write_all(tmp_path / "part1", [make_otel.spans_request([first], "travel-svc", ids)])
    db = tmp_path / "x.duckdb"
    store = Store.open(db)
    ingest([tmp_path / "part1.jsonl"], store)
    assert [e["type"] for e in events(store)] == ["llm_request", "llm_response", "tool_call"]
    store.close()
    store = Store.open(db)
    s = ingest([OTEL / "genai.pb"], store)  # the whole trace, same ids
    ev = events(store)
    assert s.events == 6 and len(ev) == 6 and [e["seq"] for e in ev] == list(range(6))
    assert [e["file_id"] for e in ev] == [1, 1, 1, 2, 2, 2]  # first copy of a span wins


def test_events_table_matches_event_schema() -> None:
    store = Store.open(None)
    cols = rows(
        store,
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_name = 'events' ORDER BY ordinal_position",
    )
    assert [c["column_name"] for c in cols] == EVENT_SCHEMA.names
    nullable = {f.name: f.nullable for f in EVENT_SCHEMA}
    assert all((c["is_nullable"] == "YES") == nullable[c["column_name"]] for c in cols)
    arrow = store.con.sql("SELECT * FROM events").to_arrow_table()
    assert arrow.schema.names == EVENT_SCHEMA.names
    assert [f.type for f in arrow.schema] == [f.type for f in EVENT_SCHEMA]


def test_empty_files_are_each_empty_not_duplicates(tmp_path: Path) -> None:
    # three empty files share one sha256; "duplicate of a.jsonl" misled the reader
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        (tmp_path / name).write_bytes(b"")
    store = Store.open(None)
    got = ingest([tmp_path], store)
    assert (got.files, got.duplicates) == (3, 0)
    reasons = [r[0] for r in store.con.execute("SELECT reason FROM skipped").fetchall()]
    assert reasons == ["empty file"] * 3
    store.close()
