"""Whether zstd data ends between frames or inside one, from its compressed bytes alone.

python-zstandard's readers stop without an error where a truncated file ends (a frame
cut short is decompressed as far as its whole blocks go, or not at all), so a zstd log
cut off by a crash would read as a shorter, valid one. ``Frames`` follows the frame
layout of RFC 8878 (frame header, block headers, checksum; skippable frames) as the
bytes go by, skipping block contents unread, so the reader can tell at its end whether
the last frame was whole: a few operations per 128 KiB block, and nothing decompressed.
``ZstdReader`` decompresses by those blocks: a block's data out per call at most, every
whole block before a cut read (the library's own reader also drops what it had decoded
of a truncated frame past its last full read).
"""

from __future__ import annotations

import io
from collections import deque
from typing import IO, Any

import zstandard

MAGIC = 0xFD2FB528
"""A zstd frame's magic number (little-endian ``28 B5 2F FD``)."""
SKIPPABLE = 0x184D2A50
"""Skippable frames' magic numbers: this one to ``SKIPPABLE + 15``."""
_FCS_BYTES = (0, 2, 4, 8)
"""Frame content size bytes by flag (flag 0 with the single-segment bit: 1 byte)."""
_DID_BYTES = (0, 1, 2, 4)


class Frames:
    """Where zstd data fed in order stands in its frames; ``whole`` after the last byte."""

    def __init__(self) -> None:
        self._state = "magic"
        self._need = 4
        self._held = bytearray()
        self._skip = 0
        self._last = False
        self._checksum = False
        self._lost = False  # not zstd framing where expected: the decompressor says why

    def whole(self) -> bool:
        """Whether the bytes so far end between frames (or are no frame the walk knows,
        which the decompressor itself refuses)."""
        return self._lost or (self._state == "magic" and not self._held and not self._skip)

    def feed(self, data: bytes | bytearray | memoryview) -> list[int]:
        """Follow ``data``, the next compressed bytes; the offsets in it where a block ends."""
        view, at, n = memoryview(data), 0, len(data)
        ends: list[int] = []
        while at < n and not self._lost:
            if self._skip:
                k = min(self._skip, n - at)
                self._skip -= k
                at += k
                if not self._skip:
                    if self._state == "block body":
                        ends.append(at)
                    self._skipped()
                continue
            k = min(self._need - len(self._held), n - at)
            self._held += view[at : at + k]
            at += k
            if len(self._held) == self._need:
                head = bytes(self._held)
                self._held.clear()
                if self._step(head):  # an empty block
                    ends.append(at)
        return ends

    def _expect(self, state: str, need: int) -> None:
        self._state, self._need = state, need

    def _step(self, head: bytes) -> bool:
        """Act on a header; whether it was a whole (empty) block."""
        match self._state:
            case "magic":
                magic = int.from_bytes(head, "little")
                if magic == MAGIC:
                    self._expect("descriptor", 1)
                elif magic & ~0xF == SKIPPABLE:
                    self._expect("skippable size", 4)
                else:
                    self._lost = True
            case "descriptor":
                d = head[0]
                single = bool(d & 0x20)
                self._checksum = bool(d & 0x04)
                fcs = _FCS_BYTES[d >> 6] or (1 if single else 0)
                rest = (0 if single else 1) + _DID_BYTES[d & 0x03] + fcs
                if rest:
                    self._expect("header", rest)
                else:
                    self._expect("block", 3)
            case "header":
                self._expect("block", 3)
            case "checksum":
                self._expect("magic", 4)
            case "block":
                h = int.from_bytes(head, "little")
                kind, size = (h >> 1) & 0x03, h >> 3
                if kind == 3:  # reserved block type
                    self._lost = True
                    return False
                self._last = bool(h & 1)
                self._state = "block body"
                self._skip = 1 if kind == 1 else size  # an RLE block holds one byte
                if not self._skip:
                    self._skipped()
                    return True
            case "skippable size":
                self._state = "skippable body"
                self._skip = int.from_bytes(head, "little")
                if not self._skip:
                    self._skipped()
        return False

    def _skipped(self) -> None:
        """A block's or skippable frame's content is behind: what comes next."""
        if self._state == "skippable body" or (self._last and not self._checksum):
            self._expect("magic", 4)
        elif self._last:
            self._expect("checksum", 4)
        else:
            self._expect("block", 3)


CUT_SHORT = "zstd data ends inside a frame: cut short"


class ZstdReader(io.RawIOBase):
    """The decompressed bytes of a zstd stream (every frame), fed to the decompressor one
    block at a time: each call makes at most a block's 128 KiB (a bomb is bounded by the
    caller's limits, never by one call's memory), every whole block before a cut comes out,
    and the end of data inside a frame raises ``EOFError`` (``CUT_SHORT``)."""

    def __init__(self, source: IO[bytes], read_size: int = 1 << 16) -> None:
        super().__init__()
        self.source, self.read_size = source, read_size
        self.frames = Frames()
        self._d = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True)
        self._pieces: deque[memoryview] = deque()  # compressed, each ending where a block does
        self._out = b""
        self._at = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._at >= len(self._out):
            if self._pieces:
                self._out, self._at = self._d.decompress(self._pieces.popleft()), 0
                continue
            if self._eof:
                if not self.frames.whole():
                    raise EOFError(CUT_SHORT)
                return 0
            chunk = self.source.read(self.read_size)
            if not chunk:
                self._eof = True
                continue
            view, start = memoryview(chunk), 0
            for end in [*self.frames.feed(view), len(view)]:
                if end > start:
                    self._pieces.append(view[start:end])
                start = end
        n = min(len(b), len(self._out) - self._at)
        b[:n] = self._out[self._at : self._at + n]
        self._at += n
        return n

    def close(self) -> None:
        self.source.close()
        super().close()
