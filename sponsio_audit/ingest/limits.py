"""``Limits``: the documented bounds ingest holds untrusted input to, and the error of a bound hit.

Trace files come from outside: a 2 MB gzip may hold 2 GB of zeros, one line
may be a gigabyte, one transcript may hold a hundred thousand messages. Each
bound below has a name (used in skip reasons: ``limit file_bytes=…``) and a
default generous enough for real corpora; hitting one skips the record (or
the rest of the file, for stream-level bounds) with that name and value in
the reason, never more. ``Limits`` is a frozen value handed down explicitly
(``ingest(…, limits=…)``), so workers in other processes see the same bounds.
A user sets them with ``scan --ingest-limit NAME=VALUE`` (repeatable), the
``SPONSIO_AUDIT_INGEST_LIMITS`` variable (``NAME=VALUE,…``) or a ``limits:``
mapping in ``sponsio.yaml``; the flag wins over the variable, the variable over
the file (``with_settings``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any

MiB = 1 << 20


def _limit(default: int, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class Limits:
    """Bounds on one ingest run; every field is settable, its default and reason given here
    (the one registry: ``describe``, ``sponsio-audit limits`` and the README read it)."""

    file_bytes: int = _limit(
        8 << 30,
        "bytes unpacked from one gzip/zstd file; past it the rest is skipped "
        "(a plain file is read whole)",
    )
    ratio: int = _limit(
        200, "decompressed/compressed bytes of one file or record, checked past ratio_floor"
    )
    ratio_floor: int = _limit(
        16 * MiB, "decompressed bytes below which ratio is not checked (small files compress well)"
    )
    layers: int = _limit(
        4, "gzip/zstd layers inside each other in one file or record; a deeper one is skipped"
    )
    record_bytes: int = _limit(
        128 * MiB, "bytes of one record once decompressed: a JSON line, document or protobuf body"
    )
    attributes: int = _limit(
        10_000, "attributes of one span (after duplicates merge); a record with more is skipped"
    )
    spans_per_record: int = _limit(
        1_000_000, "spans of one OTLP request (record); a record with more is skipped"
    )
    spans_per_trace: int = _limit(
        2_000_000, "spans of one trace in a run; the records adding spans past it are skipped"
    )
    messages: int = _limit(20_000, "messages of one transcript run; a run with more is skipped")

    def __post_init__(self) -> None:
        """Refuse a value no setting could give (a library caller's ``Limits(...)``): past
        ``MAX_VALUE`` every record was skipped with an ``OverflowError``, below 1 each one."""
        for f in fields(self):
            v = getattr(self, f.name)
            try:
                if isinstance(v, bool) or not isinstance(v, int):  # text is for settings only
                    raise ValueError(_EXPECTED)
                parse_value(v)  # the one range rule of every setting
            except ValueError as e:
                raise LimitError(f"limit {f.name}={v!r}: {e}") from None

    def describe(self) -> list[tuple[str, int, str]]:
        """(name, value, reason) of every limit, in declaration order (for help texts and docs)."""
        return [(f.name, getattr(self, f.name), f.metadata["doc"]) for f in fields(self)]

    def with_settings(self, settings: Iterable[tuple[str, Any, str]]) -> Limits:
        """These limits with ``(name, value, where)`` settings applied in order (later wins);
        ``LimitError`` names ``where`` (a flag, the variable or a YAML path) and the problem."""
        names = [f.name for f in fields(self)]
        values: dict[str, int] = {}
        for name, raw, where in settings:
            if name not in names:
                raise LimitError(f"{where}: unknown limit {name!r}; known: {', '.join(names)}")
            try:
                values[name] = parse_value(raw)
            except ValueError as e:
                raise LimitError(f"{where}: {name}={raw!r}: {e}") from None
        return replace(self, **values)


SIZE_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
"""Suffixes a limit value may carry (``--ingest-limit record_bytes=256MiB``)."""
ENV = "SPONSIO_AUDIT_INGEST_LIMITS"
"""Environment variable of limit settings: ``NAME=VALUE`` pairs separated by commas."""


class LimitError(ValueError):
    """A limit setting that names no limit or gives no usable value (a usage error)."""


MAX_VALUE = 1 << 53
"""The largest value a limit takes (8192TiB, far past any real corpus): a byte count
passed to ``read`` must fit a C ``ssize_t`` and a count a DuckDB BIGINT, or every record
is skipped with an ``OverflowError``; 2**53 also stays exact in any JSON reader."""


def parse_value(raw: Any) -> int:
    """A limit value: a whole number from 1 to ``MAX_VALUE``, as an int or text (``_``
    separators and a ``SIZE_UNITS`` suffix allowed)."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        n = raw
    elif isinstance(raw, str):
        text, scale = raw.strip().replace("_", ""), 1
        for unit, size in SIZE_UNITS.items():
            if text.endswith(unit):
                text, scale = text[: -len(unit)].strip(), size
                break
        if not (text.isascii() and text.isdigit()):
            raise ValueError(_EXPECTED)
        n = int(text) * scale if len(text.lstrip("0")) <= 20 else MAX_VALUE + 1
    else:
        raise ValueError(_EXPECTED)
    if not 1 <= n <= MAX_VALUE:
        raise ValueError(_EXPECTED)
    return n


_EXPECTED = (
    "expected a whole number from 1 to 8192TiB (2**53), optionally with KiB, MiB, GiB or TiB"
)


def parse_pair(text: str, where: str) -> tuple[str, str, str]:
    """``NAME=VALUE`` as a setting ``(name, value, where)``; ``LimitError`` otherwise."""
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise LimitError(f"{where}: {text!r}: expected NAME=VALUE (see sponsio-audit limits)")
    return name.strip(), value.strip(), where


def env_settings(text: str | None) -> list[tuple[str, str, str]]:
    """The settings of the ``ENV`` variable's value (empty items ignored)."""
    if not text:
        return []
    return [parse_pair(item, ENV) for item in text.split(",") if item.strip()]


def shown(value: int) -> str:
    """A limit value as a user would write it (``8GiB``, ``20000``)."""
    for unit, size in reversed(SIZE_UNITS.items()):
        if value >= size and value % size == 0:
            return f"{value // size}{unit}"
    return str(value)


DEFAULT = Limits()
"""The limits of a run that sets none."""


class LimitExceeded(Exception):
    """A bound of ``Limits`` was hit; the message is the one-line skip reason naming it."""

    def __init__(self, name: str, value: int, what: str) -> None:
        super().__init__(f"{what} (limit {name}={value})")
        self.name = name
        self.value = value


def stream_failure(e: Exception) -> str:
    """The skip reason of a stream that broke while read: a bound's own reason, else the
    error named (corrupt compression, I/O), at most 300 characters."""
    if isinstance(e, LimitExceeded):
        return str(e)
    return f"unreadable stream: {type(e).__name__}: {e}"[:300]


def check_ratio(limits: Limits, out: int, compressed: int, what: str) -> None:
    """Raise ``LimitExceeded`` when ``out`` decompressed bytes from ``compressed`` is a bomb."""
    if out > limits.ratio_floor and out > limits.ratio * max(compressed, 1):
        raise LimitExceeded(
            "ratio", limits.ratio, f"{what}: over {out} bytes from {compressed} compressed"
        )
