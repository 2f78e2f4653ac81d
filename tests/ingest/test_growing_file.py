"""A file another program appends to while it is scanned (a live agent log) is audited as
it was hashed: the records read are those of the bytes whose sha256 and size the files
table records, with one process or with workers alike (``files.prefix``). Before, one
process read a compressed file, a protobuf file or a large file hashed while read
(``hash_beside``) on to its new end: the report's sha256 named bytes other than those
audited, and ``--jobs 1`` and ``--jobs 2`` audited different traces."""

from __future__ import annotations

import gzip
import hashlib
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.ingest import Store, chunks, ingest, pipeline, workers

from .conftest import FIXTURES, OTEL, WAYS, ingest_while_changed, read_as

LINES = (OTEL / "genai.jsonl").read_bytes().splitlines(keepends=True)


def _shifted(line: bytes) -> bytes:
    """The same record with other trace ids (so that its spans are new ones)."""
    out = line.replace(b'"traceId":"00', b'"traceId":"ff').replace(
        b'"traceId": "00', b'"traceId": "ff'
    )
    assert out != line
    return out


def _append(more: bytes, path: Path) -> None:
    with path.open("ab") as f:
        f.write(more)


def _spans(store: Store) -> list[tuple[Any, ...]]:
    return store.con.execute("SELECT trace_id, span_id, record FROM spans ORDER BY ALL").fetchall()


@pytest.mark.parametrize("how", WAYS)
def test_a_file_that_grows_while_scanned_is_audited_as_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    body = b"".join(LINES * 4)
    extra = b"".join(_shifted(line) for line in LINES)
    assert extra != b"".join(LINES)  # the appended records hold other traces
    name = "spans.jsonl.gz" if how.startswith("gzip") else "spans.jsonl"
    if how.startswith("gzip"):
        body, extra = gzip.compress(body), gzip.compress(extra)  # a second gzip member
    if how.startswith("protobuf"):  # length-prefixed requests: the same ones again
        name, body = "spans.otlp.pb", (FIXTURES / "demo/traces/coding_agent.otlp.pb").read_bytes()
        extra = body
    path = tmp_path / name
    path.write_bytes(body)
    want_store = Store.open(None)
    want = ingest([path], want_store, jobs=1)  # the file as it was hashed, alone
    assert want.skipped == 0 and want.spans > 0

    jobs = read_as(how, monkeypatch)
    store, got = ingest_while_changed(path, partial(_append, extra), jobs, monkeypatch)

    assert (got.records, got.spans, got.skipped) == (want.records, want.spans, 0)
    assert _spans(store) == _spans(want_store)
    ((size, sha),) = store.con.execute("SELECT bytes, sha256 FROM files").fetchall()
    assert size == len(body) and sha == hashlib.sha256(body).hexdigest()
    assert path.stat().st_size == len(body) + len(extra)  # it did grow


@pytest.mark.parametrize("beside", [False, True], ids=["hashed first", "hashed while read"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_record_cut_off_where_the_file_was_hashed_is_listed_as_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, beside: bool
) -> None:
    """The writer was halfway through a line when the file was hashed (or measured, for a
    file hashed while it is read): that line is one skipped record, not a half-read trace,
    and the totals add up."""
    whole = b"".join(LINES * 4)
    last = _shifted(LINES[0])
    half = len(last) // 2
    path = tmp_path / "live.jsonl"
    path.write_bytes(whole + last[:half])
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2_000)
    if jobs == 2:
        monkeypatch.setattr(workers, "START_INLINE", False)
    if beside:
        monkeypatch.setattr(pipeline, "HASH_THREAD_BYTES", 0)
    alone = tmp_path / "alone.jsonl"
    alone.write_bytes(whole)
    want = ingest([alone], Store.open(None), jobs=1)
    store, got = ingest_while_changed(path, partial(_append, last[half:]), jobs, monkeypatch)
    assert (got.records, got.skipped) == (want.records + 1, 1)  # records = loaded + skipped
    ((record, reason),) = store.con.execute("SELECT record, reason FROM skipped").fetchall()
    assert record == want.records + 1 and reason
    assert got.spans == want.spans  # the half line gave no span
    ids = store.con.execute("SELECT DISTINCT trace_id FROM spans").fetchall()
    assert ids and not any(t.startswith("ff") for (t,) in ids)
