"""``files.file_hash`` of a large file (hashed on a thread beside the line-end search) and
``files.hash_beside`` (hashed while the file is read) give the file's own sha256, and
``file_hash`` the line ends and size a plain read of its blocks gives: a wrong hash would
make a new file a "duplicate", skipped unread, or a duplicate read twice."""

from __future__ import annotations

import hashlib
import random
import shutil
import tempfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest import Store, chunks, files, ingest, pipeline
from sponsio_audit.ingest.line_ranges import LineIndex
from sponsio_audit.ingest.tables import TABLES
from tests.conftest import fetched

from .conftest import FIXTURES


@pytest.mark.parametrize("threaded", [True, False])
def test_file_hash_is_the_files_sha256_and_line_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threaded: bool
) -> None:
    rng = random.Random(7)
    lines = [rng.randbytes(rng.randrange(0, 50_000)).replace(b"\n", b" ") for _ in range(300)]
    data = b"\n".join(lines)  # ~7.5 MB: several 1 MiB blocks, no newline at the end
    path = tmp_path / "big.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1 << 20)
    monkeypatch.setattr(files, "HASH_THREAD_BYTES", 0 if threaded else len(data) + 1)
    sha, size, index = files.file_hash(str(path))
    want = LineIndex(1 << 20)
    for at in range(0, len(data), 1 << 16):
        want.add(data[at : at + (1 << 16)])
    assert sha == hashlib.sha256(data).hexdigest()
    assert size == len(data) == index.size
    assert index.ranges() == want.ranges() and len(index.ranges()) >= 5
    assert index.lines == data.count(b"\n")


def test_hash_beside_is_the_files_sha256(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = random.Random(3).randbytes(3_500_000)
    path = tmp_path / "big.pb"
    path.write_bytes(data)
    monkeypatch.setattr(files, "_BESIDE_BLOCK", 1 << 20)  # several reads, the last one short
    assert files.hash_beside(str(path), len(data)).result() == hashlib.sha256(data).hexdigest()
    cut = 2_200_123  # a prefix, as ``prefix`` reads it: not a block's multiple
    assert files.hash_beside(str(path), cut).result() == hashlib.sha256(data[:cut]).hexdigest()


def _tables(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows in insertion order."""
    return {t: fetched(store.con, f"SELECT * FROM {t} ORDER BY rowid") for t in TABLES}


@pytest.mark.parametrize("jobs", [1, 2])
def test_files_hashed_while_read_give_the_tables_and_duplicates_of_files_hashed_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """A large file of a size no other file has is read while it is hashed
    (``pipeline._hashed``): on a thread in one process, by a ``LineHash`` whose ranges go
    to the workers as they are found with workers. Every fixture file goes that way here
    (JSON lines, protobuf, compressed, session logs, documents); the tables, the sha256s
    and the duplicates found (a copy in the same run, the same files in a second run) must
    be those of hashing every file before reading it."""
    data = tmp_path / "data"
    shutil.copytree(FIXTURES, data, ignore=shutil.ignore_patterns("*.py", "*.md", "*.yaml"))
    shutil.copy(data / "otel" / "genai.jsonl", data / "genai_copy.jsonl")  # same size and sha
    got = {}
    for beside in (False, True):
        monkeypatch.setattr(pipeline, "HASH_THREAD_BYTES", 0 if beside else 1 << 62)
        store = Store.open(None)
        first = ingest([data], store, jobs=jobs)
        again = ingest([data / "otel"], store, jobs=jobs)
        got[beside] = (first, again, _tables(store))
        store.close()
    first, again, tables = got[True]
    assert first.duplicates == 1 and again.duplicates == again.files >= 3
    shas = {p: s for _, p, _, _, s, *_ in tables["files"] if s}
    assert (
        shas[str(data / "otel" / "genai.jsonl")]
        == hashlib.sha256((data / "otel" / "genai.jsonl").read_bytes()).hexdigest()
    )
    assert got[True] == got[False]


def _fed(index: LineIndex, data: bytes, sizes: list[int]) -> LineIndex:
    """``index`` given ``data`` in blocks of ``sizes`` bytes, then the rest in one block."""
    at = 0
    for size in [*sizes, len(data)]:
        index.add(data[at : at + size])
        at = min(len(data), at + size)
    return index


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab\n", max_size=300).map(str.encode),
    st.lists(st.integers(0, 40), max_size=12),
    st.integers(1, 50),
)
def test_line_index_cuts_at_line_ends_and_counts_the_lines_before(
    data: bytes, sizes: list[int], every: int
) -> None:
    """However the file's bytes come in blocks (empty ones too), each range starts just
    past a newline at least ``every`` bytes after the previous start, the first such
    newline, with the lines before it counted; the index holds the file's size and newline
    count. A ``digested`` index cuts the same, and its ``digests`` are the CRC-32 of each
    range's own bytes, in the order of ``ranges``: a Spark task compares the bytes it is
    about to read with them, so a digest off by a byte passes a changed file or fails an
    unchanged one."""
    want, start = [(0, 0)], 0
    while (j := data.find(b"\n", start + every - 1)) >= 0:
        start = j + 1
        want.append((start, data[:start].count(b"\n")))
    for index in (
        _fed(LineIndex(every), data, sizes),
        _fed(LineIndex.digested(every), data, sizes),
    ):
        assert index.cuts == want
        assert (index.size, index.lines) == (len(data), data.count(b"\n"))
    assert index.digests() == [zlib.crc32(data[o : o + n]) for o, n, _ in index.ranges()]


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet="ab\n", max_size=400).map(str.encode),
    st.integers(1, 60),
    st.integers(1, 50),
    st.integers(0, 30),
    st.booleans(),
    st.data(),
)
def test_line_hash_yields_the_ranges_of_the_whole_file_as_they_are_read(
    data: bytes, block: int, every: int, taken: int, threaded: bool, draw: st.DataObject
) -> None:
    """``LineHash.ranges`` yields, in order, exactly the ranges the index of the whole
    file (``file_hash``) gives, each one before the read is past the next block that
    closes it; ``result`` is the sha256 of the bytes hashed, also when the ranges were left
    unread midway; with ``size``, only the file's first ``size`` bytes count (a file that
    grew after it was measured). A range missed or cut elsewhere would lose or split
    records that the workers read."""
    size = draw.draw(st.none() | st.integers(0, len(data)), label="size")
    bytes_ = data if size is None else data[:size]
    want = LineIndex(every)
    want.add(bytes_)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "spans.jsonl"
        path.write_bytes(data)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(chunks, "CHUNK_BYTES", every)
            mp.setattr(files, "BLOCK", block)
            mp.setattr(files, "HASH_THREAD_BYTES", 0 if threaded else 1 << 62)
            with files.LineHash(str(path), size) as whole:
                got = list(whole.ranges())
                assert whole.result() == hashlib.sha256(bytes_).hexdigest()
            with files.LineHash(str(path), size) as part:
                ranges = part.ranges()
                first = [r for _, r in zip(range(taken), ranges, strict=False)]
                for offset, length, _ in first:  # yielded once its end was read
                    assert offset + length <= part.index.size
                assert part.result() == hashlib.sha256(bytes_).hexdigest()
    assert got == want.ranges()
    assert first == got[:taken]
    assert (whole.index.size, whole.index.lines) == (len(bytes_), bytes_.count(b"\n"))
