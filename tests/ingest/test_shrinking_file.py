"""A file another program truncates while it is scanned (a live log rotated with
copytruncate) is never audited as if it were whole: where the file ends before the bytes
measured of it, the read stops with a skipped record that names the cut
(``line_ranges.Shrank``), and the sha256 recorded is either that of the bytes measured
(hashed before the cut) or none, with a skipped record saying why. Before, every reader
took the early end for the file's end: half a file's traces went missing without a
word, the files table named the sha256 and size of the whole file, and a scan of what
was left could come out clean."""

from __future__ import annotations

import gzip
import hashlib
from functools import partial
from pathlib import Path

import pytest

from sponsio_audit.ingest import Store, ingest

from .conftest import OTEL, WAYS, ingest_while_changed, read_as

LINES = (OTEL / "genai.jsonl").read_bytes().splitlines(keepends=True)
SHRANK = "the file shrank while it was read"


def _cut(keep: int, path: Path) -> None:
    with path.open("r+b") as f:
        f.truncate(keep)


@pytest.mark.parametrize("how", WAYS)
def test_a_file_cut_while_scanned_lists_the_cut_and_never_passes_as_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    body = b"".join(LINES * 8)
    name = "spans.jsonl"
    if how.startswith("gzip"):
        name, body = "spans.jsonl.gz", gzip.compress(body)
    if how.startswith("protobuf"):  # length-prefixed requests
        name, body = "spans.otlp.pb", (OTEL / "genai.pb").read_bytes() * 4
    path = tmp_path / name
    path.write_bytes(body)
    whole_store = Store.open(None)
    whole = ingest([path], whole_store, jobs=1)
    assert whole.skipped == 0 and whole.records > 2

    jobs = read_as(how, monkeypatch)
    store, got = ingest_while_changed(path, partial(_cut, len(body) // 2), jobs, monkeypatch)

    reasons = [r for (r,) in store.con.execute("SELECT reason FROM skipped").fetchall()]
    assert any(SHRANK in r for r in reasons), reasons
    assert all(SHRANK in r for r in reasons), reasons  # nothing else went wrong
    loaded = store.con.execute("SELECT count(DISTINCT record) FROM spans").fetchall()[0][0]
    assert got.records == loaded + got.skipped  # every record read is loaded or listed
    assert got.spans < whole.spans
    ((size, sha),) = store.con.execute("SELECT bytes, sha256 FROM files").fetchall()
    assert size == len(body)
    if sha is None:  # hashed while read, and the hash met the cut
        assert any(r.startswith("cannot read file for its sha256: " + SHRANK) for r in reasons)
    else:  # hashed before the cut: the bytes measured
        assert sha == hashlib.sha256(body).hexdigest()
    first = set(store.con.execute("SELECT span_id FROM spans").fetchall())
    assert first <= set(whole_store.con.execute("SELECT span_id FROM spans").fetchall())
