"""The OTLP signal of a protobuf export request (traces, logs or metrics), by a peek at its
wire format: the three requests share their outer field numbers, so a file of one is not
told from a file of another by its first bytes (``sniff``), only by its first item.

Reads only tags and lengths (never a whole message), and never raises on cut input.
"""

from __future__ import annotations


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """The varint at ``data[i:]`` and the index after it (raises IndexError when cut)."""
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, i
        shift += 7
        if shift > 63:
            raise IndexError("varint too long")


def _field(data: bytes, i: int, end: int, want: int) -> tuple[int, int] | None:
    """(start, end) of the first length-delimited field ``want`` in ``data[i:end]``."""
    while i < end:
        tag, i = _varint(data, i)
        num, wire = tag >> 3, tag & 7
        if wire == 0:
            _, i = _varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = _varint(data, i)
            if num == want:
                return i, min(i + n, end)
            i += n
        else:
            return None
    return None


_METRIC_TAGS = frozenset({0x1A, 0x2A, 0x3A, 0x4A, 0x52, 0x5A, 0x62})
"""Tags that may follow a Metric's name (unit, the data kinds, metadata)."""


def proto_signal(data: bytes) -> str:
    """The OTLP signal of one protobuf export request, by the shape of its first item.

    The three requests look alike down to the item (field 1 → field 2 → field 2):
    a ``LogRecord`` starts with a fixed64/varint field or a field number above 1,
    a ``Span`` with its 16-byte trace id (field 1) then its 8-byte span id, a
    ``Metric`` with its name (field 1, any length), then a description or data.
    A request with no item (or cut short) is read as traces.
    """
    try:
        res = _field(data, 0, len(data), 1)
        scope = _field(data, res[0], res[1], 2) if res else None
        item = _field(data, scope[0], scope[1], 2) if scope else None
        if item is None or item[0] >= item[1]:
            return "traces"
        tag, i = _varint(data, item[0])
        if tag != 0x0A:
            return "logs"
        n, i = _varint(data, i)
        if n != 16 or i + n >= item[1]:
            return "traces" if n == 16 else "metrics"
        nxt, i = _varint(data, i + n)  # a span id (field 2, 8 bytes) follows a trace id
        if nxt == 0x12:
            return "traces" if _varint(data, i)[0] == 8 else "metrics"
        return "metrics" if nxt in _METRIC_TAGS else "traces"
    except IndexError:
        return "traces"
