"""A log rotated by renaming it away and creating a new file at its path (logrotate's
default) while it is scanned is never audited as the new file's bytes under the old
file's sha256 and size: every open after the file was measured checks that the path
still names that file (``line_ranges.Replaced``), and a read that finds another one
stops with a skipped record saying so. Before, ``prefix`` and the workers reopened the
path: a new file already longer than the old one was read up to the old size, its spans
loaded as the old file's (a cut line at the end the only trace of it), and the old
file's own spans never read."""

from __future__ import annotations

import gzip
import hashlib
import os
from functools import partial
from pathlib import Path

import pytest

from sponsio_audit.ingest import Store, ingest

from .conftest import OTEL, WAYS, ingest_while_changed, read_as

REPLACED = "the file was replaced while it was read"


def _bodies(how: str) -> tuple[str, bytes, bytes]:
    """The file's name, its bytes when measured, and a longer new file's (other spans)."""
    if how.startswith("protobuf"):  # length-prefixed requests
        old, new = (OTEL / "genai.pb").read_bytes() * 4, (OTEL / "openinference.pb").read_bytes()
        return "spans.otlp.pb", old, new * 6
    old, new = (OTEL / "genai.jsonl").read_bytes() * 8, (OTEL / "openinference.jsonl").read_bytes()
    if how.startswith("gzip"):
        return "spans.jsonl.gz", gzip.compress(old), gzip.compress(new * 200)
    return "spans.jsonl", old, new * 12


def _rotate(new: bytes, path: Path) -> None:
    os.rename(path, path.with_name(path.name + ".1"))
    path.write_bytes(new)


@pytest.mark.parametrize("after_sniff", [False, True], ids=["at sniff", "after sniff"])
@pytest.mark.parametrize("how", WAYS)
def test_a_file_replaced_while_scanned_is_listed_and_the_new_file_never_read_as_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, after_sniff: bool
) -> None:
    name, old, new = _bodies(how)
    assert len(new) > len(old)  # no cut to see: only the file's identity tells
    path = tmp_path / name
    path.write_bytes(old)
    whole_store = Store.open(None)
    whole = ingest([path], whole_store, jobs=1)
    assert whole.skipped == 0 and whole.records > 2
    old_spans = set(whole_store.con.execute("SELECT span_id FROM spans").fetchall())

    jobs = read_as(how, monkeypatch)
    change = partial(_rotate, new)
    store, got = ingest_while_changed(path, change, jobs, monkeypatch, after_sniff=after_sniff)

    reasons = [r for (r,) in store.con.execute("SELECT reason FROM skipped").fetchall()]
    assert any(REPLACED in r for r in reasons), reasons
    assert all(REPLACED in r for r in reasons), reasons  # nothing else went wrong
    loaded = store.con.execute("SELECT count(DISTINCT record) FROM spans").fetchall()[0][0]
    assert got.records == loaded + got.skipped  # every record read is loaded or listed
    spans = set(store.con.execute("SELECT span_id FROM spans").fetchall())
    assert spans <= old_spans  # not one span of the new file
    ((size, sha),) = store.con.execute("SELECT bytes, sha256 FROM files").fetchall()
    assert size == len(old)
    if sha is None:  # hashed while read, and the hash found the new file
        assert any(r.startswith("cannot read file for its sha256: " + REPLACED) for r in reasons)
    else:  # hashed before the rename: the old file's bytes
        assert sha == hashlib.sha256(old).hexdigest()
