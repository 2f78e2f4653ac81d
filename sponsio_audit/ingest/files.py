"""The files of a run: which paths are read, which are refused unopened, and how a file's
bytes are hashed and its event records read.

``walk`` expands directories (sorted, so a run reads files in the same order
every time); ``irregular`` names a FIFO, device or socket, which would block or
never end if opened; ``file_hash`` reads a file once for its sha256 (a file seen
before is a duplicate, ``duplicate_reason``) and its line ends (``line_ranges``);
``event_records`` parses a file that holds events already; ``prefix`` opens a file
for its records as far as it was hashed, so that a file another program appends to
while it is read is audited as hashed. The pipeline and the Spark planner both use
these, so the two read the same files the same way.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import threading
import zlib
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from sponsio_audit.ingest import chunks
from sponsio_audit.ingest.layers import BadRecord, compression
from sponsio_audit.ingest.limits import Limits
from sponsio_audit.ingest.line_ranges import Changed, Ident, LineIndex, Window, ident, open_same
from sponsio_audit.ingest.sniff import json_lines, read_document
from sponsio_audit.ingest.workers import AUTO_BYTES
from sponsio_audit.threads import background


def walk(paths: list[str | Path]) -> Iterator[str]:
    """Files named by ``paths``: directories recursively in sorted order, ``-`` for stdin.
    A folder that cannot be listed (no permission) is yielded itself, so that it is listed
    as not read (``irregular`` says why) instead of left out without a word."""
    failed: list[str] = []
    for p in paths:
        s = str(p)
        if s != "-" and os.path.isdir(s):
            for root, dirs, files in os.walk(s, onerror=lambda e: failed.append(e.filename)):
                dirs.sort()
                yield from failed
                failed.clear()
                for name in sorted(files):
                    yield os.path.join(root, name)
            yield from failed
        else:
            yield s


def own_files_of(bases: list[str | Path]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Real paths of the database files ``bases`` and their write-ahead logs, and of their
    spill folders (with a trailing separator): what DuckDB writes for a store there."""
    files = {os.path.realpath(f) for b in bases for f in (b, f"{b}.wal")}
    folders = tuple(os.path.join(os.path.realpath(f"{b}.tmp"), "") for b in bases)
    return frozenset(files), folders


def is_own(path: str, files: frozenset[str], folders: tuple[str, ...]) -> bool:
    """Whether ``path`` is one of ``own_files_of``' files or lies in one of its folders."""
    if not files:
        return False
    real = os.path.realpath(path)
    return real in files or real.startswith(folders)


def input_bytes(paths: list[str | Path]) -> int | None:
    """Total size of the files under ``paths`` (None with stdin), stopping at ``AUTO_BYTES``."""
    total = 0
    for p in walk(paths):
        if p == "-":
            return None
        try:
            total += os.path.getsize(p)
        except OSError:
            continue
        if total >= AUTO_BYTES:
            break
    return total


HASH_THREAD_BYTES = 16 << 20
"""Size from which ``file_hash`` hashes on a thread of its own, beside the line ends."""


def file_hash(
    path: str, same: Ident | None = None, every: int | None = None, digests: bool = False
) -> tuple[str, int, LineIndex]:
    """The file's sha256 and size, and where its lines end (read once, in 1 MiB blocks;
    ``same``: the file must be the one that ``Ident`` names, ``open_same``; ``every``:
    the ranges' least bytes, ``LineIndex.every``, else ``chunks.CHUNK_BYTES``; ``digests``:
    the index keeps each range's CRC-32 too, ``LineIndex.digested``).

    In a large file each block is hashed on a second thread while this one finds its
    line ends (``_hashing``): the two cost about the same."""
    with LineHash(path, same=same, every=every, digests=digests) as h:
        sha = h.result()
        return sha, h.index.size, h.index


class LineHash:
    """A file's sha256 and line index (``LineIndex``), computed block by block as its
    ranges are taken (``ranges``), or all at once (``result``).

    Workers read a JSON-lines file as ranges of its lines; a file that cannot be a
    duplicate (no stored or earlier file has its size) needs no hash before it is read,
    so its ranges go to the workers as the read finds them, instead of after the whole
    file was read (139 MB: the first chunk 0.12 s sooner, the workers idle until then).
    ``size``: read only the first ``size`` bytes (as hashed when ``prefix`` reads them),
    else to the end; ``same``: the file ``Ident`` names (``open_same``); ``every``: as
    ``file_hash`` (and ``digests``). The file is opened at once: an unreadable (or replaced)
    file fails here."""

    def __init__(
        self,
        path: str,
        size: int | None = None,
        same: Ident | None = None,
        every: int | None = None,
        digests: bool = False,
    ) -> None:
        raw = open_same(path, same)
        self._f: io.RawIOBase = raw if size is None else Window(raw, 0, size)
        self._fd = raw.fileno()
        self.size = size
        every = every or chunks.CHUNK_BYTES  # read at call time (tests shrink it)
        self.index = LineIndex.digested(every) if digests else LineIndex(every)
        self._sha = hashlib.sha256()
        self._blocks = self._read()
        self._done = False
        self._error: OSError | None = None

    def __enter__(self) -> LineHash:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def compressed(self) -> bool:
        """Whether the file starts with a gzip or zstd header (never cut into ranges)."""
        head = os.pread(self._fd, 4, 0)
        return compression(head) is not None

    def _read(self) -> Generator[None, None, None]:
        """Hash and index the next block at each step (a large file's blocks hashed on a
        thread beside the line-end search, ``_hashing``). An error is kept for ``result``
        (``Shrank`` where the file ends before ``size``)."""
        size = self.size if self.size is not None else os.fstat(self._fd).st_size
        big = size >= HASH_THREAD_BYTES
        pool = ThreadPoolExecutor(1, thread_name_prefix="sponsio-audit-hash") if big else None
        hashed: Future[None] | None = None
        try:
            while block := self._f.read(BLOCK):
                if pool is None:
                    self._sha.update(block)
                else:
                    if hashed is not None:
                        hashed.result()  # one block at a time, in file order
                    hashed = _hashing(pool, self._sha, block)
                self.index.add(block)
                yield
            if hashed is not None:
                hashed.result()
            self._done = True
        except OSError as e:
            self._error = e
            raise
        finally:
            if pool is not None:
                pool.shutdown()

    def ranges(self) -> Iterator[tuple[int, int, int]]:
        """``LineIndex.ranges`` of the file, each yielded once the line end that closes it
        has been read (the last ones at the end of the file)."""
        out = 0
        for _ in self._blocks:
            cuts = self.index.cuts
            while out + 1 < len(cuts):
                (offset, lines), (end, _n) = cuts[out], cuts[out + 1]
                yield offset, end - offset, lines + 1
                out += 1
        yield from self.index.ranges()[out:]

    def result(self) -> str:
        """The sha256 of the file's bytes (reading what ``ranges`` has not read yet)."""
        for _ in self._blocks:
            pass
        if not self._done:
            raise self._error or OSError("the file was not read to its end")
        return self._sha.hexdigest()

    def close(self) -> None:
        """Close the file (and stop a hashing thread)."""
        self._blocks.close()
        self._f.close()


BLOCK = 1 << 20
"""Bytes ``LineHash`` reads at a time."""


PREFIX_BUFFER = 1 << 20
"""Read-ahead of ``prefix``'s buffer: each refill is one Python call. ``readline`` of the
139 MB bench file (700 KB lines) took 0.067 s with it, 0.10 s with the default 8 KB."""


def prefix(path: str, size: int, same: Ident | None = None) -> IO[bytes]:
    """The file's first ``size`` bytes (its size when hashed), buffered: what is hashed and
    counted is what is read, even while a program appends to the file (a live log), and
    the result does not depend on ``--jobs`` (workers read line ranges of the hashed
    bytes). ``same``: the file measured, not one put at its path since (``open_same``)."""
    return io.BufferedReader(Window(open_same(path, same), 0, size), PREFIX_BUFFER)


def hash_beside(path: str, size: int, same: Ident | None = None) -> Future[str]:
    """The sha256 of the file's first ``size`` bytes (those ``prefix`` reads), computed on a
    thread of its own while the caller reads the file:
    hashlib and the reads release the GIL, so it costs the caller's core next to nothing.
    For a file that cannot be a duplicate (``Store.has_bytes``), whose hash is then only
    recorded, not needed before the read (one process, 139 MB: the first chunk 0.13 s
    sooner; 696 MB: 0.5 s)."""
    return background("hash", _sha256, path, size, same)


def _sha256(path: str, size: int, same: Ident | None) -> str:
    h = hashlib.sha256()
    _feed(open_same(path, same), 0, size, h.update)
    return h.hexdigest()


_BESIDE_BLOCK = 8 << 20


def _feed(raw: io.FileIO, offset: int, end: int, update: Callable[[memoryview], object]) -> None:
    """Bytes [``offset``, ``end``) of ``raw`` (closed after) to ``update``, in one buffer of
    ``_BESIDE_BLOCK`` bytes reused: few GIL hand-overs, no allocations."""
    view = memoryview(bytearray(_BESIDE_BLOCK))
    with Window(raw, offset, end - offset) as f:
        while n := f.readinto(view):
            update(view[:n])


def unchanged(path: str, offset: int, end: int, sha: str | None = None, crc: int = 0) -> Ident:
    """Which file ``path`` names, once its bytes [``offset``, ``end``) are checked to be
    those hashed before (their sha256 ``sha`` when given, else their CRC-32 ``crc``), for a
    reader on another host than the hashing one (a Spark task), where an ``Ident`` cannot be
    compared: a file replaced or rewritten since raises ``Changed`` (one cut shorter,
    ``Shrank``), so it is never read under the old one's sha256; the reader's later opens
    check the ``Ident`` returned (``open_same``)."""
    raw = open_same(path, None)
    same = ident(os.fstat(raw.fileno()))
    if sha is not None:
        h = hashlib.sha256()
        _feed(raw, offset, end, h.update)
        ok = h.hexdigest() == sha
    else:
        got = 0

        def add(block: memoryview) -> None:
            nonlocal got
            got = zlib.crc32(block, got)

        _feed(raw, offset, end, add)
        ok = got == crc
    if not ok:
        raise Changed(offset, end)
    return same


def _hashing(pool: ThreadPoolExecutor, h: Any, block: bytes) -> Future[None]:
    """``h.update(block)`` started on ``pool``'s thread. hashlib releases the GIL while it
    hashes, but the line-end search does not (``bytes.count`` is one C call): the caller
    waits until the thread has the GIL and is entering the update, else the hashing
    would mostly wait for the search (0.19 s against 0.11 s for 139 MB here)."""
    started = threading.Event()

    def run() -> None:
        started.set()
        h.update(block)

    future = pool.submit(run)
    started.wait()
    return future


def event_records(fmt: str, layout: str, open_: Any, limits: Limits) -> Iterator[tuple[int, Any]]:
    """Parsed records of a file of events (session log, native, transcript) or a JSON document
    (ingest and the Spark tasks read them with it)."""
    if layout == "lines":
        yield from json_lines(open_, limits)
    else:
        try:
            yield 1, read_document(open_, limits)
        except BadRecord as e:
            yield 1, e


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def irregular(path: str) -> str | None:
    """Why ``path`` (symlinks followed) must not be opened, or None for a regular file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # the open that follows reports the error
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):  # ``walk`` yields a folder only when it could not list it
        try:
            os.scandir(path).close()
        except OSError as e:
            return f"cannot read folder: {e.strerror or e}; not read"
    kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
    return f"not a regular file ({kind}); not read"


def duplicate_reason(earlier: str) -> str:
    """The skip reason of a file whose sha256 an earlier file already had."""
    return f"duplicate of {earlier} (same sha256), not read again"


def otlp_decoder(fmt: str) -> str:
    """The decoder of a sniffed OTLP format: a file sniffed as logs or metrics by its first
    line is OTLP/JSON, each record routed by its own signal (``chunks.decode``)."""
    return "otlp_json" if fmt in ("otlp_logs", "otlp_metrics") else fmt
