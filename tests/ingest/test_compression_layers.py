"""gzip and zstd inside each other: every stack up to ``Limits.layers`` reads as the plain
file, a deeper one is one named skip (sniff.py's module doc: compression "possibly
nested"). A gzip inside a gzip once lost the whole file as "unreadable stream:
AttributeError"."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import zstandard

from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ingest.layers import decompressed
from sponsio_audit.ingest.limits import LimitExceeded, Limits

from .conftest import OTEL, events, rows

STACKS = [
    ("gzip", "gzip"),
    ("zstd", "gzip"),
    ("gzip", "zstd"),
    ("zstd", "zstd"),
    ("gzip", "zstd", "gzip", "gzip"),
]


def _wrap(data: bytes, stack: tuple[str, ...]) -> bytes:
    """``data`` compressed by each layer of ``stack`` in turn (the last is outermost)."""
    for layer in stack:
        data = gzip.compress(data) if layer == "gzip" else zstandard.compress(data)
    return data


def _body(name: str) -> bytes:
    """The one protobuf request of a length-prefixed fixture."""
    data = (OTEL / name).read_bytes()
    n = int.from_bytes(data[:4], "big")
    assert len(data) == 4 + n  # one record
    return data[4:]


def _delimited(*bodies: bytes) -> bytes:
    return b"".join(len(b).to_bytes(4, "big") + b for b in bodies)


def _events(path: Path, jobs: int = 1, limits: Limits | None = None) -> tuple[Store, list]:
    store = Store.open(None)
    s = ingest([path], store, jobs=jobs, limits=limits or Limits())
    assert s.records == s.skipped + len(rows(store, "SELECT DISTINCT record FROM spans"))
    return store, [{k: v for k, v in e.items() if k != "file_id"} for e in events(store)]


@pytest.mark.parametrize("stack", STACKS, ids="+".join)
@pytest.mark.parametrize("name", ["genai.jsonl", "genai.pb"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_in_nested_compression_reads_as_the_plain_file(
    tmp_path: Path, stack: tuple[str, ...], name: str, jobs: int
) -> None:
    plain = tmp_path / name
    plain.write_bytes((OTEL / name).read_bytes())
    packed = tmp_path / f"packed.{name}"
    packed.write_bytes(_wrap(plain.read_bytes(), stack))
    _, want = _events(plain)
    store, got = _events(packed, jobs=jobs)
    assert rows(store, "SELECT * FROM skipped") == []
    assert len(want) == 6 and got == want


@pytest.mark.parametrize("name", ["genai.jsonl", "genai.pb"])
def test_a_file_deeper_than_the_limit_is_one_named_skip(tmp_path: Path, name: str) -> None:
    deep = tmp_path / f"deep.{name}"
    deep.write_bytes(_wrap((OTEL / name).read_bytes(), ("gzip",) * 5))
    store, got = _events(deep)
    assert got == []
    assert rows(store, "SELECT record, reason FROM skipped") == [
        {"record": 1, "reason": "compressed more than 4 layers deep (limit layers=4)"}
    ]
    (f,) = rows(store, "SELECT records, skipped FROM files")
    assert f == {"records": 1, "skipped": 1}
    _, raised = _events(deep, limits=Limits(layers=5))
    _, plain = _events(OTEL / name)
    assert raised == plain and len(plain) == 6


def test_a_record_deeper_than_the_limit_costs_only_itself(tmp_path: Path) -> None:
    """Per-record compression of a length-prefixed file (the Collector's ``format: proto``
    with compressed records): record 2, in five gzip layers, is skipped and named;
    records 1 and 3, in four mixed layers, are read as if plain."""
    a, b, c = _body("genai.pb"), _body("openllmetry.pb"), _body("genai_deprecated.pb")
    four = ("zstd", "gzip", "gzip", "zstd")
    path = tmp_path / "records.pb"
    path.write_bytes(_delimited(_wrap(a, four), _wrap(b, ("gzip",) * 5), _wrap(c, four)))
    store, got = _events(path)
    assert rows(store, "SELECT record, reason FROM skipped") == [
        {"record": 2, "reason": "compressed more than 4 layers deep (limit layers=4)"}
    ]
    assert rows(store, "SELECT DISTINCT record FROM spans ORDER BY record") == [
        {"record": 1},
        {"record": 3},
    ]
    plain = tmp_path / "plain.pb"
    plain.write_bytes(_delimited(a, c))
    _, want = _events(plain)
    assert got == [{**e, "record": 1 if e["record"] == 1 else 3} for e in want]
    _, raised = _events(path, limits=Limits(layers=5))
    full = tmp_path / "full.pb"
    full.write_bytes(_delimited(a, b, c))
    assert raised == _events(full)[1]


@pytest.mark.parametrize("stack", [*STACKS, ("gzip",) * 5], ids="+".join)
def test_closing_the_stream_closes_the_file(tmp_path: Path, stack: tuple[str, ...]) -> None:
    """A scan of a directory of compressed logs opens each file once: closing what
    ``decompressed`` gave (or its refusal of a file too deep) closes the file, also under
    gzip, whose ``GzipFile`` leaves the stream it reads open."""
    path = tmp_path / "packed"
    path.write_bytes(_wrap((OTEL / "genai.jsonl").read_bytes(), stack))
    raw = path.open("rb")
    try:
        stream, layers = decompressed(raw)
    except LimitExceeded:
        assert len(stack) == 5
    else:
        assert layers == list(reversed(stack))
        assert stream.read().startswith(b'{"resourceSpans"')
        stream.close()
    assert raw.closed


def _skippable(payload: bytes, nibble: int = 0) -> bytes:
    """A zstd skippable frame (RFC 8878 3.1.2): magic 0x184D2A5n, 4-byte size, payload; all
    little-endian, as ``pzstd`` starts its files (its payload: the next frame's size)."""
    magic = 0x184D2A50 + nibble
    return magic.to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


@pytest.mark.parametrize("name", ["genai.jsonl", "genai.pb"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_zstd_file_starting_with_a_skippable_frame_reads_as_the_plain_file(
    tmp_path: Path, name: str, jobs: int
) -> None:
    """A file whose first zstd frame is a skippable one (pzstd's output) was listed as
    'unrecognised format'; it is zstd, read past every skippable frame, also between
    frames and with the last magic (0x184D2A5F)."""
    data = (OTEL / name).read_bytes()
    half = len(data) // 2
    packed = tmp_path / f"pzstd.{name}"
    packed.write_bytes(
        _skippable(b"\x48\x06\x00\x00")
        + zstandard.compress(data[:half])
        + _skippable(b"any payload", nibble=15)
        + zstandard.compress(data[half:])
    )
    _, want = _events(OTEL / name)
    store, got = _events(packed, jobs=jobs)
    assert rows(store, "SELECT * FROM skipped") == []
    assert rows(store, "SELECT format FROM files") == [
        {"format": "otlp_json" if name.endswith("jsonl") else "otlp_proto"}
    ]
    assert len(want) == 6 and got == want
    raw = packed.open("rb")
    stream, layers = decompressed(raw)
    with stream:
        assert layers == ["zstd"] and stream.read() == data


def test_a_zstd_file_cut_inside_its_skippable_frame_is_one_named_skip(tmp_path: Path) -> None:
    """Data that ends inside the leading skippable frame is zstd cut short, said so."""
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(_skippable(b"x" * 64)[:20])
    store, got = _events(cut)
    assert got == []
    (skip,) = rows(store, "SELECT reason FROM skipped")
    assert skip["reason"].endswith("zstd data ends inside a frame: cut short")


def test_a_record_starting_with_a_skippable_frame_reads_as_plain(tmp_path: Path) -> None:
    """A length-prefixed record compressed by a zstd writer that leads with a skippable
    frame is read like the plain record."""
    a, c = _body("genai.pb"), _body("genai_deprecated.pb")
    path = tmp_path / "records.pb"
    path.write_bytes(_delimited(_skippable(b"\0\0\0\0") + zstandard.compress(a), c))
    plain = tmp_path / "plain.pb"
    plain.write_bytes(_delimited(a, c))
    store, got = _events(path)
    assert rows(store, "SELECT * FROM skipped") == []
    assert got == _events(plain)[1]
