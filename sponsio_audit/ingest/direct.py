"""Formats that are events already (session logs, native traces, transcripts) → store rows.

These are small, per-agent files, so one trace (a file, or a transcript run) is
buffered whole, its events ordered by time (stable: file order for equal or
missing times) and numbered, then written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sponsio_audit.event import EVENT_SCHEMA, Event, event_row
from sponsio_audit.ingest import native, session_log, transcript
from sponsio_audit.ingest.chunks import decode_document
from sponsio_audit.ingest.parsed import Parsed
from sponsio_audit.ingest.sniff import BadRecord, classify
from sponsio_audit.ingest.store import decision_row

_COLUMNS = tuple(EVENT_SCHEMA.names)
"""Columns of the ``events`` table, in order."""


def numbered(trace: list[Event]) -> list[Event]:
    """Events sorted by start time (missing times keep file order) with seq 0..n-1."""
    idx = sorted(
        range(len(trace)), key=lambda i: (trace[i].start_ns is None, trace[i].start_ns or 0, i)
    )
    if any(trace[i].start_ns is None for i in idx) and any(e.start_ns is not None for e in trace):
        idx = list(range(len(trace)))  # mixed timing: file order is the only consistent order
    out = []
    for seq, i in enumerate(idx):
        d = dict(trace[i].__dict__)
        d["seq"] = seq
        out.append(Event(**d))
    return out


def load(
    r: Any, file_id: int, sha: str, fmt: str, layout: str, recs: Iterable[tuple[int, Any]]
) -> tuple[int, int, str]:
    """Read one event-shaped file into the run's buffers; returns (records, skipped, format)."""
    recs = iter(recs)
    if layout == "document":
        first = next(recs, None)
        if first is None:
            return 0, 0, fmt
        no, doc = first
        if isinstance(doc, BadRecord):
            r.skipped.add((file_id, no, str(doc)))
            return 1, 1, fmt
        fmt = classify(doc) or "json"
        if fmt == "otlp_json":
            return 1, r.take(decode_document(file_id, r.run, no, doc), file_id), fmt
        if fmt not in ("session_log", "native", "transcript"):
            reason = {
                "otlp_logs": "OTLP logs, not traces",
                "otlp_metrics": "OTLP metrics, not traces",
            }
            r.skipped.add((file_id, no, reason.get(fmt, "unrecognised JSON document")))
            return 1, 1, fmt
        recs = iter([(no, doc)])
    reader = {
        "session_log": session_log.parse,
        "native": native.parse,
        "transcript": transcript.parse,
    }[fmt]
    parsed: Parsed = reader(_guard(recs), file_id, f"{fmt}:{sha[:16]}")
    for no, why in parsed.skipped:
        r.skipped.add((file_id, no, why))
    for trace in parsed.traces:
        r.direct_traces += 1  # an empty trace (n = 0) is still a trace
        for ev in numbered(trace):
            row = event_row(ev)
            r.events.add(tuple(row[c] for c in _COLUMNS))
    for d in parsed.decisions:
        r.decisions.add(decision_row(d))
    return parsed.records, len(parsed.skipped), fmt


def _guard(recs: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    yield from recs
