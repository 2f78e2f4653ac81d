"""Compressed data cut short (a crash mid-write, a partial copy) is a named skip after
every whole record before the cut, never a shorter valid file. python-zstandard's
readers end without an error at a truncated frame, so a zstd log cut after a flushed
block once lost its last records with nothing listed, a small one read as an "empty
file", and a cut record of a length-prefixed file as a request without spans; a gzip
log lost the lines decompressed in the read that hit its cut (layers.py,
zstd_frames.py)."""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ingest.zstd_frames import CUT_SHORT as CUT
from sponsio_audit.ingest.zstd_frames import Frames, ZstdReader

from .conftest import OTEL, events, rows


def _whole(data: bytes, step: int) -> bool:
    frames = Frames()
    for at in range(0, len(data), step):
        frames.feed(data[at : at + step])
    return frames.whole()


def _streamed(data: bytes, piece: int, **kw: object) -> bytes:
    """``data`` as one zstd frame of blocks flushed every ``piece`` bytes (no content size:
    what a log writer streaming to a file leaves)."""
    out = io.BytesIO()
    w = zstandard.ZstdCompressor(**kw).stream_writer(out, closefd=False)  # type: ignore[arg-type]
    for at in range(0, len(data), piece):
        w.write(data[at : at + piece])
        w.flush(zstandard.FLUSH_BLOCK)
    w.close()
    return out.getvalue()


def _skippable(payload: bytes) -> bytes:
    return (0x184D2A53).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


_frame = st.builds(
    lambda data, level, checksum, size, piece, streamed: (
        _streamed(data, piece, level=level, write_checksum=checksum)
        if streamed
        else zstandard.ZstdCompressor(
            level=level, write_checksum=checksum, write_content_size=size
        ).compress(data)
    ),
    st.one_of(st.binary(max_size=3000), st.sampled_from([b"\0" * 300_000, b"ab" * 90_000])),
    st.sampled_from([-5, 1, 3, 19]),
    st.booleans(),
    st.booleans(),
    st.integers(1, 4000),
    st.booleans(),
) | st.binary(max_size=40).map(_skippable)


@settings(max_examples=150, deadline=None)
@given(st.lists(_frame, min_size=1, max_size=4), st.integers(1, 5000), st.data())
def test_frames_end_whole_exactly_between_frames(
    frames: list[bytes], step: int, data: st.DataObject
) -> None:
    """RFC 8878's layout as zstandard writes it: whole at every frame boundary, in any
    feeding steps; inside a frame at every other cut."""
    blob = b"".join(frames)
    bounds = {sum(len(f) for f in frames[:i]) for i in range(len(frames) + 1)}
    assert _whole(blob, step)
    cut = data.draw(st.integers(0, len(blob)), label="cut")
    assert _whole(blob[:cut], step) == (cut in bounds)


@settings(max_examples=100, deadline=None)
@given(st.lists(_frame, min_size=1, max_size=3), st.data())
def test_the_reader_gives_the_data_and_every_whole_block_before_a_cut(
    frames: list[bytes], data: st.DataObject
) -> None:
    """``ZstdReader`` against zstandard's one-shot decompression: the same bytes for whole
    data; cut inside a frame, a prefix of them, then ``EOFError``."""
    blob = b"".join(frames)
    want = b"".join(zstandard.ZstdDecompressor().decompressobj().decompress(f) for f in frames)
    assert _read(blob) == (want, False)
    cut = data.draw(st.integers(0, len(blob)), label="cut")
    got, cut_short = _read(blob[:cut])
    bounds = {sum(len(f) for f in frames[:i]) for i in range(len(frames) + 1)}
    assert want.startswith(got) and cut_short == (cut not in bounds)
    if cut_short:  # every whole block before the cut is out
        blocks = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True)
        assert got == blocks.decompress(blob[:cut])


def _read(blob: bytes) -> tuple[bytes, bool]:
    """What ``ZstdReader`` reads of ``blob`` in small steps, and whether it ended cut short."""
    out = bytearray()
    r = ZstdReader(io.BytesIO(blob), read_size=777)
    buf = bytearray(1000)
    try:
        while n := r.readinto(buf):
            out += buf[:n]
    except EOFError as e:
        assert str(e) == CUT
        return bytes(out), True
    return bytes(out), False


def _lines() -> bytes:
    """Five one-trace JSON lines (the OTLP fixture, its ids made distinct)."""
    line = (OTEL / "genai.jsonl").read_bytes().strip()
    tid = b'"traceId":"'
    at = line.index(tid) + len(tid)
    old = line[at : at + 32]
    return b"".join(line.replace(old, b"%032x" % (0xA0 + i)) + b"\n" for i in range(5))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_zstd_log_cut_after_a_flushed_block_lists_the_cut(tmp_path: Path, jobs: int) -> None:
    """Each line is its own block: cut after the third block, the file decompresses to
    three whole lines, and once read as a whole three-line file."""
    plain = _lines()
    per_line = len(plain.splitlines()[0]) + 1
    blob = _streamed(plain, per_line, level=3)
    ends = Frames().feed(blob)  # the byte offsets where a block ends
    assert len(ends) == 5 + 1  # a block per line, and the empty last block
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(blob[: ends[2]])
    assert zstandard.ZstdDecompressor().decompressobj().decompress(cut.read_bytes()) == b"".join(
        plain.splitlines(keepends=True)[:3]
    )  # three whole lines: no sign of the cut in them
    store = Store.open(None)
    s = ingest([cut], store, jobs=jobs)
    assert rows(store, "SELECT record, reason FROM skipped") == [
        {"record": 4, "reason": f"unreadable stream: EOFError: {CUT}"}
    ]
    assert (s.records, s.skipped, s.spans) == (4, 1, 18)
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"".join(plain.splitlines(keepends=True)[:3]))
    ref = Store.open(None)
    ingest([whole], ref)
    drop = {"file_id"}
    assert [{k: v for k, v in e.items() if k not in drop} for e in events(store)] == [
        {k: v for k, v in e.items() if k not in drop} for e in events(ref)
    ]


def test_a_small_zstd_file_cut_short_is_not_an_empty_file(tmp_path: Path) -> None:
    blob = zstandard.compress(_lines())
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(blob[:-5])
    store = Store.open(None)
    s = ingest([cut], store)
    assert rows(store, "SELECT record, reason FROM skipped") == [
        {"record": 1, "reason": f"unreadable stream: EOFError: {CUT}"}
    ]
    assert (s.records, s.skipped, s.spans) == (1, 1, 0)


def _record(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def test_a_zstd_record_cut_short_costs_only_itself(tmp_path: Path) -> None:
    """Length-prefixed records, each compressed: record 2's frame lacks its last bytes
    (its length prefix says so); record 3 is two frames, both read."""
    data = (OTEL / "genai.pb").read_bytes()[4:]
    other = (OTEL / "openllmetry.pb").read_bytes()[4:]
    half = len(other) // 2
    two = zstandard.compress(other[:half]) + zstandard.compress(other[half:])
    path = tmp_path / "records.pb"
    path.write_bytes(
        _record(zstandard.compress(data)) + _record(zstandard.compress(data)[:-4]) + _record(two)
    )
    store = Store.open(None)
    s = ingest([path], store)
    assert rows(store, "SELECT record, reason FROM skipped") == [
        {"record": 2, "reason": f"corrupt zstd record: {CUT}"}
    ]
    plain = tmp_path / "plain.pb"
    plain.write_bytes(_record(data) + _record(other))
    ref = Store.open(None)
    r = ingest([plain], ref)
    assert (s.records, s.skipped, s.spans) == (3, 1, r.spans)
    assert rows(store, "SELECT record, count(*) AS n FROM spans GROUP BY record ORDER BY 1") == [
        {"record": 1, "n": 6},
        {"record": 3, "n": r.spans - 6},
    ]


@pytest.mark.parametrize("missing", [8, 1, "half"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_every_whole_line_before_a_gzip_cut_is_read(
    tmp_path: Path, missing: int | str, jobs: int
) -> None:
    """A gzip log cut short: each line its decompressed prefix holds whole is read, then
    the cut is listed. Lines decompressed in the same buffered read as the cut were
    once dropped with it (the 8-byte trailer missing lost the last two lines of five)."""
    plain = _lines()
    blob = gzip.compress(plain)
    n = len(blob) // 2 if missing == "half" else len(blob) - int(missing)
    held = zlib.decompressobj(wbits=31).decompress(blob[:n])
    whole = held.count(b"\n")
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(blob[:n])
    store = Store.open(None)
    s = ingest([cut], store, jobs=jobs)
    reason = (
        "unreadable stream: EOFError: "
        "Compressed file ended before the end-of-stream marker was reached"
    )
    assert rows(store, "SELECT record, reason FROM skipped") == [
        {"record": whole + 1, "reason": reason}
    ]
    assert (s.records, s.skipped, s.spans) == (whole + 1, 1, 6 * whole)
    assert whole == 5 or missing == "half"
