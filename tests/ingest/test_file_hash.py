"""``files.file_hash`` of a large file (hashed on a thread beside the line-end search) gives
the file's own sha256, and the line ends and size a plain read of its blocks gives: a wrong
hash would make a new file a "duplicate", skipped unread, or a duplicate read twice."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from sponsio_audit.ingest import chunks, files
from sponsio_audit.ingest.line_ranges import LineIndex


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
