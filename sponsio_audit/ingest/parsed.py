"""What a reader of an event-shaped file returns (``Parsed``), and the timestamps it reads.

The readers (``session_log``, ``native``, ``transcript``) and ``direct``,
which writes their events to the store, share these; keeping them here
lets ``direct`` import the readers without the readers importing it back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from sponsio_audit.event import Event
from sponsio_audit.ingest.values import INT64


@dataclass
class Parsed:
    """What one format reader made of a file: traces of events, decisions, skips.

    ``trace_ids`` names each trace (same order) when the reader knows it, so a
    trace with no events is still listed in the ``traces`` table.
    """

    traces: list[list[Event] | Iterator[Event]] = field(default_factory=list)
    """Lists are ordered by time (``numbered``); iterators are in order already (transcripts)."""
    trace_ids: list[str] = field(default_factory=list)  # each trace's id, when known
    decisions: list[tuple] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    records: int = 0


def ts_ns(v: Any) -> int | None:
    """A timestamp as Unix nanoseconds: ISO-8601 text (naive = UTC) or epoch s/ms/µs/ns."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        x = float(v)
        if x != x:  # NaN
            return None
        for scale in (1e9, 1e6, 1e3, 1.0):
            if abs(x) * scale < 1e19:
                ns = int(v * scale) if scale > 1 else int(v)
                return ns if -INT64 <= ns < INT64 else None  # beyond int64: not a time
        return None
    if isinstance(v, str):
        try:
            d = datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if d.tzinfo is None:
            d = d.replace(tzinfo=timezone.utc)
        delta = d - datetime(1970, 1, 1, tzinfo=timezone.utc)
        return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    return None
