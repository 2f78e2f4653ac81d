"""Byte ranges of an uncompressed JSON-lines file, cut at line ends while it is hashed.

The main process reads every file once anyway, for its sha256. Noting where
lines end on that read (``LineIndex``) lets the file be cut into ranges of
about ``chunks.CHUNK_BYTES`` that a worker reads itself (``range_records``),
so the main process neither splits lines nor ships their bytes to workers.
A range starts right after a newline, so every line lies wholly in one range
and is numbered as a reading of the whole file numbers it (``sniff.raw_lines``
with the range's first line number). Compressed files are read as before.
"""

from __future__ import annotations

import io
import os
import zlib
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from sponsio_audit.ingest.layers import BadRecord, compression
from sponsio_audit.ingest.limits import DEFAULT, Limits
from sponsio_audit.ingest.sniff import raw_lines


@dataclass
class LineIndex:
    """Line ends seen while reading a file front to back in blocks (``add``)."""

    every: int
    """Bytes a range holds at least: it ends at the first line end from there (or the file's)."""
    cuts: list[tuple[int, int]] = field(default_factory=lambda: [(0, 0)])
    """(byte offset just past a newline, newlines before it) of each range start."""
    size: int = 0
    lines: int = 0
    head: bytes = b""
    crcs: list[int] | None = None
    """With a list (``digested``), the CRC-32 of each range closed so far (``digests``)."""
    crc: int = 0
    """The CRC-32 of the bytes after the last cut (the open range), when ``crcs`` is kept."""

    @classmethod
    def digested(cls, every: int) -> LineIndex:
        """An index that also keeps each range's CRC-32 (``digests``): a Spark task checks
        that the bytes it reads are those the driver cut and hashed."""
        return cls(every, crcs=[])

    def add(self, block: bytes) -> None:
        """Note the line ends of the file's next ``block``."""
        if len(self.head) < 4:
            self.head = (self.head + block[:4])[:4]
        if self.compressed():  # never cut into ranges (read as a stream): no line ends needed
            self.size += len(block)
            return
        base, lines, counted = self.size, self.lines, 0
        i = self.cuts[-1][0] + self.every - 1 - base  # a range ends at a newline from here
        while i < len(block):
            j = block.find(b"\n", max(i, 0))
            if j < 0:
                break
            lines += _newlines(block, counted, j + 1)
            if self.crcs is not None:
                self._close(block, self.cuts[-1][0] - base, j + 1)
            counted = j + 1
            self.cuts.append((base + j + 1, lines))
            i = j + self.every
        if self.crcs is not None:
            self.crc = zlib.crc32(memoryview(block)[max(self.cuts[-1][0] - base, 0) :], self.crc)
        self.size += len(block)
        self.lines = lines + _newlines(block, counted, len(block))

    def _close(self, block: bytes, start: int, end: int) -> None:
        """Close the open range at ``block[end]``, whose bytes in ``block`` start at ``start``
        (negative: it began in an earlier block)."""
        assert self.crcs is not None
        self.crcs.append(zlib.crc32(memoryview(block)[max(start, 0) : end], self.crc))
        self.crc = 0

    def digests(self) -> list[int]:
        """The CRC-32 of each range of ``ranges``, in order (an index made ``digested``)."""
        if self.crcs is None:
            raise ValueError("this index keeps no digests (LineIndex.digested)")
        return [*self.crcs, self.crc][: len(self.ranges())]

    def compressed(self) -> bool:
        """Whether the file starts with a gzip or zstd header (``layers.compression``)."""
        return compression(self.head) is not None

    def ranges(self) -> list[tuple[int, int, int]]:
        """(offset, length, first line number) of every range, in file order."""
        starts = [c for c in self.cuts if c[0] < self.size] or [(0, 0)]
        ends = [c[0] for c in starts[1:]] + [self.size]
        return [(o, e - o, n + 1) for (o, n), e in zip(starts, ends, strict=True)]


def _newlines(block: bytes, start: int, end: int) -> int:
    """How many newlines ``block[start:end]`` holds, counted by NumPy: ``bytes.count`` goes
    byte by byte holding the GIL (37 ms against 11 for 139 MB), on the main process's read
    that the workers wait for."""
    return int(np.count_nonzero(np.frombuffer(block, np.uint8, end - start, start) == 10))


class Shrank(OSError):
    """The file ended before the bytes measured of it (another program truncated it while
    it was read: a log rotated with copytruncate): what was measured can no longer be
    read, so the read stops with this error, which names the cut, instead of ending early
    as if the file were whole (its missing records then lost without a word)."""

    def __init__(self, at: int, due: int) -> None:
        super().__init__(f"the file shrank while it was read: it ends at byte {at:,} of {due:,}")


Ident = tuple[int, int]
"""A file's (``st_dev``, ``st_ino``) when it was measured: which file a path named then."""


def ident(st: os.stat_result) -> Ident:
    """The ``Ident`` of a stat result."""
    return st.st_dev, st.st_ino


class Replaced(OSError):
    """The path names another file than the one measured (a log rotated by renaming it away
    and creating a new one at its path): the measured bytes are no longer at that path, and
    the new file's would be read under the old one's sha256 and size."""

    def __init__(self) -> None:
        super().__init__(
            "the file was replaced while it was read (moved away and a new file put at its"
            " path, as log rotation does): the rest of it is no longer at this path"
        )


def open_same(path: str, same: Ident | None) -> io.FileIO:
    """``path`` opened unbuffered, checked to be the file measured (``same``; None: any)."""
    raw = open(path, "rb", buffering=0)  # noqa: SIM115 (the caller closes it)
    if same is not None and ident(os.fstat(raw.fileno())) != same:
        raw.close()
        raise Replaced
    return raw


class Changed(OSError):
    """The bytes at a path are no longer those measured there (the file was replaced or
    rewritten since): read now, they would be audited under the old file's sha256."""

    def __init__(self, offset: int, end: int) -> None:
        super().__init__(
            f"the file changed after it was hashed: its bytes {offset:,} to {end:,} are not"
            " those hashed (replaced or rewritten since), so they are not read"
        )


class Window(io.RawIOBase):
    """``length`` bytes of an open raw file from ``offset`` (a part of it that was measured:
    a range, or the file as hashed), as a stream: 0 at the window's end, ``Shrank`` where
    the file ends first. ``tell`` is the position in the file."""

    def __init__(self, raw: io.FileIO, offset: int, length: int) -> None:
        super().__init__()
        if offset:
            raw.seek(offset)
        self.raw, self.pos, self.end = raw, offset, offset + length

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        """Fill ``b`` from the window."""
        left = self.end - self.pos
        if left <= 0:
            return 0
        n = self.raw.readinto(memoryview(b).cast("B")[:left]) or 0
        if not n:
            raise Shrank(self.pos, self.end)
        self.pos += n
        return n

    def tell(self) -> int:
        return self.pos

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_range(path: str, offset: int, length: int, same: Ident | None = None) -> IO[bytes]:
    """``length`` bytes of ``path`` from ``offset``, as a buffered stream (of the file
    ``same`` names, ``open_same``)."""
    return io.BufferedReader(Window(open_same(path, same), offset, length), 1 << 20)


def range_records(
    path: str,
    offset: int,
    length: int,
    first: int,
    limits: Limits = DEFAULT,
    same: Ident | None = None,
) -> list[tuple[int, bytes | BadRecord]]:
    """The non-blank lines of one range as ``raw_lines`` gives them for the whole file."""
    return list(raw_lines(lambda: open_range(path, offset, length, same), limits, first=first))
