"""Compression layers of a file or record (gzip ``1F 8B``, zstd ``28 B5 2F FD``), peeled off
by magic bytes, possibly inside each other up to ``Limits.layers`` deep, every read bounded
(``Limits``: decompressed bytes, their ratio to the compressed ones).

Whole files (``decompressed``) are read as streams; one record of a length-prefixed file
(``unwrap_record``) in bounded steps. Data cut short inside its last gzip member or zstd
frame is an error, never a shorter stream (``zstd_frames``). ``BadRecord`` is the error
of a record that cannot be read, here and in every reader after (``sniff`` and the
decoders).
"""

from __future__ import annotations

import gzip
import io
import zlib
from typing import IO, Any

import zstandard

from sponsio_audit.ingest.limits import DEFAULT, LimitExceeded, Limits, check_ratio
from sponsio_audit.ingest.zstd_frames import MAGIC, SKIPPABLE, ZstdReader

GZIP = b"\x1f\x8b"
ZSTD = MAGIC.to_bytes(4, "little")
_STEP = 1 << 20


class BadRecord(Exception):
    """A record that cannot be read; the message is the one-line skip reason."""


class Bounded(io.RawIOBase):
    """A decompressed stream that raises ``LimitExceeded`` past ``file_bytes`` or ``ratio``."""

    def __init__(self, inner: IO[bytes], raw: IO[bytes], limits: Limits) -> None:
        super().__init__()
        self.inner, self.raw, self.limits, self.out = inner, raw, limits, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        """Fill ``b`` from the inner stream, counting decompressed bytes against the limits."""
        n = _step(self.inner, b)
        self.out += n
        if self.out > self.limits.file_bytes:
            raise LimitExceeded(
                "file_bytes",
                self.limits.file_bytes,
                f"decompressed stream over {self.limits.file_bytes} bytes; rest of file skipped",
            )
        try:
            compressed = self.raw.tell()
        except (OSError, ValueError):
            compressed = 0
        check_ratio(self.limits, self.out, compressed, "compression bomb; rest of file skipped")
        return int(n)

    def close(self) -> None:
        self.inner.close()
        super().close()


def _step(inner: Any, b: Any) -> int:
    """One read of ``inner`` into ``b``: ``readinto1`` where it has one, a decompressor's
    single step, whose error comes in a call that read nothing (never after bytes it drops)."""
    step = getattr(inner, "readinto1", None) or inner.readinto
    return int(step(b))


class _Kept(io.RawIOBase):
    """``inner`` read a step at a time, whose error is kept: from it on the stream reads as
    ended, and ``Reader`` raises it where it would report the end, once every byte read
    before the error is out (a ``BufferedReader`` drops the bytes it gathered in the call
    that raised: the lines before a truncated gzip's cut were lost with it)."""

    def __init__(self, inner: Any, below: IO[bytes] | None = None) -> None:
        super().__init__()
        self.inner, self.below = inner, below
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self.error is not None:
            return 0
        try:
            return _step(self.inner, b)
        except Exception as e:  # corrupt or cut-short data, a limit, I/O: said at the end
            self.error = e
            return 0

    def close(self) -> None:
        self.inner.close()
        if self.below is not None:
            self.below.close()
        super().close()


class Reader(io.BufferedReader):
    """A buffered ``_Kept`` stream: every byte before its error, then the error where the
    end (or a line, record or block cut short by it) would be returned. ``below``: the
    stream ``inner`` reads, closed with it (a ``GzipFile`` leaves its ``fileobj`` open)."""

    def __init__(self, inner: Any, below: IO[bytes] | None = None) -> None:
        super().__init__(_Kept(inner, below))

    def _failed(self, short: bool) -> None:
        error = self.raw.error  # type: ignore[attr-defined]
        if short and error is not None:
            raise error

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self._failed(size is None or size < 0 or len(data) < size)
        return data

    def read1(self, size: int = -1) -> bytes:
        data = super().read1(size)
        self._failed(not data and size != 0)
        return data

    def readinto1(self, b: Any) -> int:
        n = super().readinto1(b)
        self._failed(not n and len(b) > 0)
        return n

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        whole = line.endswith(b"\n") or (size is not None and 0 <= size <= len(line))
        self._failed(not whole)
        return line

    def peek(self, size: int = 0) -> bytes:
        data = super().peek(size)
        self._failed(not data)
        return data


def compression(head: bytes) -> str | None:
    """The compression layer a stream starting with ``head`` (its first 4 bytes) has, by
    magic bytes: "gzip", "zstd", or None. The one test of ``decompressed`` and of
    ``line_ranges``, so a file is never read raw where the stream reader would unpack it.
    A zstd skippable frame (``pzstd`` starts its files with one) is zstd too: the reader
    passes over it to the frames after it."""
    if head[:2] == GZIP:
        return "gzip"
    if head[:4] == ZSTD or skippable(head):
        return "zstd"
    return None


def skippable(head: bytes) -> bool:
    """Whether ``head`` starts with a zstd skippable frame's magic (RFC 8878 section 3.1.2)."""
    return len(head) >= 4 and int.from_bytes(head[:4], "little") & ~0xF == SKIPPABLE


def _too_deep(limits: Limits) -> LimitExceeded:
    return LimitExceeded(
        "layers", limits.layers, f"compressed more than {limits.layers} layers deep"
    )


def decompressed(raw: IO[bytes], limits: Limits = DEFAULT) -> tuple[IO[bytes], list[str]]:
    """``raw`` with gzip/zstd layers peeled off (by magic bytes), and the layers found.

    A compressed stream is ``Bounded`` by ``limits`` (file bytes and ratio); one with more
    than ``limits.layers`` layers raises ``LimitExceeded`` (``raw`` closed).
    """
    layers: list[str] = []
    stream: IO[bytes] = raw
    while True:
        buf = stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream)  # type: ignore[type-var]
        layer = compression(buf.peek(4)[:4])
        if layer is not None and len(layers) == limits.layers:
            buf.close()
            raise _too_deep(limits)
        if layer == "gzip":
            layers.append(layer)
            # mode given: GzipFile takes an inner GzipFile's ``mode`` (an int) for its own
            stream = Reader(gzip.GzipFile(fileobj=buf, mode="rb"), buf)
        elif layer == "zstd":
            layers.append(layer)
            stream = Reader(ZstdReader(buf))
        elif layers:
            return Reader(Bounded(buf, raw, limits)), layers
        else:
            return buf, layers


def _gunzip(data: bytes, cap: int, limits: Limits) -> bytes:
    """Every gzip member of ``data`` decompressed in steps, stopping past ``cap`` bytes
    (the result is then longer than ``cap``) or at a bomb's ratio (``BadRecord``)."""
    out: list[bytes] = []
    n, size = 0, len(data)
    while data[:2] == GZIP and n <= cap:
        d = zlib.decompressobj(wbits=31)
        buf = data
        while not d.eof and n <= cap:
            piece = d.decompress(buf, _STEP)
            buf = d.unconsumed_tail
            if not piece and not buf and not d.eof:
                raise EOFError("compressed data ended before the end-of-stream marker")
            out.append(piece)
            n += len(piece)
            try:
                check_ratio(limits, n, size, "compressed record is a bomb")
            except LimitExceeded as e:
                raise BadRecord(str(e)) from None
        data = d.unused_data
    return b"".join(out)


def _unzstd(data: bytes, cap: int, limits: Limits) -> bytes:
    """A zstd record (every frame of it) decompressed in steps, stopping past ``cap`` bytes
    or a bomb's ratio; a record whose last frame is cut short raises ``EOFError``."""
    out: list[bytes] = []
    n = 0
    with ZstdReader(io.BytesIO(data)) as r:
        while n <= cap and (piece := r.read(_STEP)):
            out.append(piece)
            n += len(piece)
            try:
                check_ratio(limits, n, len(data), "compressed record is a bomb")
            except LimitExceeded as e:
                raise BadRecord(str(e)) from None
    return b"".join(out)


def unwrap_record(data: bytes, limits: Limits = DEFAULT) -> bytes:
    """One record's bytes with per-record gzip/zstd compression removed (within ``limits``)."""
    cap = limits.record_bytes
    for depth in range(limits.layers + 1):
        compressed = len(data)
        if depth == limits.layers and compression(data[:4]) is not None:
            raise BadRecord(str(_too_deep(limits)))
        layer = compression(data[:4])
        if layer == "zstd":
            try:
                data = _unzstd(data, cap, limits)
            except (zstandard.ZstdError, EOFError) as e:
                raise BadRecord(f"corrupt zstd record: {e}") from None
        elif layer == "gzip":
            try:
                data = _gunzip(data, cap, limits)
            except (OSError, EOFError, zlib.error) as e:
                raise BadRecord(f"corrupt gzip record: {e}") from None
        else:
            return data
        try:
            if len(data) > cap:
                raise LimitExceeded("record_bytes", cap, "record over the size limit")
            check_ratio(limits, len(data), compressed, "compressed record is a bomb")
        except LimitExceeded as e:
            raise BadRecord(str(e)) from None
    return data
