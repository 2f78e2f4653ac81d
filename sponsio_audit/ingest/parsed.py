"""What a reader of an event-shaped file returns (``Parsed``), and the timestamps it reads.

The readers (``session_log``, ``native``, ``transcript``) and ``direct``,
which writes their events to the store, share these; keeping them here
lets ``direct`` import the readers without the readers importing it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from sponsio_audit.event import Event


@dataclass
class Parsed:
    """What one format reader made of a file: traces of events, decisions, skips."""

    traces: list[list[Event]] = field(default_factory=list)
    decisions: list[tuple] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    records: int = 0


def ts_ns(v: Any) -> int | None:
    """A timestamp as Unix nanoseconds: ISO-8601 text (naive = UTC) or epoch s/ms/µs/ns."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        x = float(v)
        for scale in (1e9, 1e6, 1e3, 1.0):
            if abs(x) * scale < 1e19:
                return int(v * scale) if scale > 1 else int(v)
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
