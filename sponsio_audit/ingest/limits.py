"""``Limits``: the documented bounds ingest holds untrusted input to, and the error of a bound hit.

Trace files come from outside: a 2 MB gzip may hold 2 GB of zeros, one line
may be a gigabyte, one transcript may hold a hundred thousand messages. Each
bound below has a name (used in skip reasons: ``limit file_bytes=…``) and a
default generous enough for real corpora; hitting one skips the record (or
the rest of the file, for stream-level bounds) with that name and value in
the reason, never more. ``Limits`` is a frozen value handed down explicitly
(``ingest(…, limits=…)``), so workers in other processes see the same bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Bounds on one ingest run; every field is settable, defaults are documented here."""

    file_bytes: int = 8 << 30
    """Decompressed bytes read from one file; past it the rest of the file is skipped."""

    ratio: int = 200
    """Decompressed ÷ compressed bytes of one file or record, checked past ``ratio_floor``."""

    ratio_floor: int = 16 * MiB
    """Decompressed bytes below which ``ratio`` is not checked (small files compress well)."""

    record_bytes: int = 128 * MiB
    """Bytes of one record once decompressed: a JSON line, a JSON document, a protobuf body."""

    attributes: int = 10_000
    """Attributes of one span (after duplicates merge); a record with more is skipped."""

    spans_per_record: int = 1_000_000
    """Spans of one OTLP request (record); a record with more is skipped."""

    spans_per_trace: int = 2_000_000
    """Spans of one trace in a run; the records adding spans past it are skipped."""

    messages: int = 20_000
    """Messages of one transcript run; a run with more is skipped."""

    def describe(self) -> list[tuple[str, int, str]]:
        """(name, value, doc) of every limit, in declaration order (for help texts and docs)."""
        docs = {
            "file_bytes": "decompressed bytes per file",
            "ratio": "decompressed/compressed ratio per file or record",
            "ratio_floor": "bytes below which the ratio is not checked",
            "record_bytes": "bytes per record (line, document, protobuf body)",
            "attributes": "attributes per span",
            "spans_per_record": "spans per OTLP request",
            "spans_per_trace": "spans per trace",
            "messages": "messages per transcript run",
        }
        return [(f.name, getattr(self, f.name), docs[f.name]) for f in fields(self)]


DEFAULT = Limits()
"""The limits of a run that sets none."""


class LimitExceeded(Exception):
    """A bound of ``Limits`` was hit; the message is the one-line skip reason naming it."""

    def __init__(self, name: str, value: int, what: str) -> None:
        super().__init__(f"{what} (limit {name}={value})")
        self.name = name
        self.value = value


def check_ratio(limits: Limits, out: int, compressed: int, what: str) -> None:
    """Raise ``LimitExceeded`` when ``out`` decompressed bytes from ``compressed`` is a bomb."""
    if out > limits.ratio_floor and out > limits.ratio * max(compressed, 1):
        raise LimitExceeded(
            "ratio", limits.ratio, f"{what}: over {out} bytes from {compressed} compressed"
        )
