"""Formats that are events already (session logs, native traces, transcripts) → store rows.

These are small, per-agent files, so one trace (a file, or a transcript run) is
buffered whole, its events ordered by time (stable: file order for equal or
missing times) and numbered, then written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sponsio_audit.event import EVENT_SCHEMA, Event, event_row
from sponsio_audit.ingest import native, session_log, transcript
from sponsio_audit.ingest.chunks import decode_document
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.parsed import Parsed
from sponsio_audit.ingest.sniff import classify
from sponsio_audit.ingest.tables import decision_row

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
        if fmt in ("otlp_json", "otlp_logs", "otlp_metrics"):  # routed by signal
            d = decode_document(file_id, r.run, no, doc, r.limits, r.store.raw_json, r.store.spans)
            return 1, r.take(d, file_id), fmt
        if fmt not in ("session_log", "native", "transcript"):
            r.skipped.add((file_id, no, "unrecognised JSON document"))
            return 1, 1, fmt
        recs = iter([(no, doc)])
    reader = {
        "session_log": session_log.parse,
        "native": native.parse,
        "transcript": transcript.parse,
    }[fmt]
    tid = f"{fmt}:{sha[:16]}"
    parsed: Parsed
    if fmt == "transcript":
        parsed = transcript.parse(_guard(recs), file_id, tid, r.limits)
    else:
        parsed = reader(_guard(recs), file_id, tid)
    for no, why in parsed.skipped:
        r.skipped.add((file_id, no, why))
    for k, trace in enumerate(parsed.traces):
        r.direct_traces += 1  # an empty trace (n = 0) is still a trace
        ids = parsed.trace_ids
        tid_k: str | None = ids[k] if k < len(ids) else None
        n = 0
        shared = Shared(r.events.add)
        for ev in numbered(trace) if isinstance(trace, list) else _in_order(trace):
            if n == 0:
                tid_k = ev.trace_id
            n += 1
            shared.add(event_row(ev))
        shared.close()
        if tid_k is not None:
            r.traces.add((tid_k, n))
    for d in parsed.decisions:
        r.decisions.add(decision_row(d))
    return parsed.records, len(parsed.skipped), fmt


@dataclass
class _Chain:
    """Rows of one agent sharing the text of ``top`` (the last recorded prompt so far), and
    the rows declared to be the start of the agent's next recorded prompt."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    top: dict[str, Any] | None = None
    declared: list[dict[str, Any]] = field(default_factory=list)


class Shared:
    """Writes one trace's rows, storing an LLM input that is the start of the agent's next
    one once (``EVENT_SCHEMA``'s ``prompt_from``/``prompt_chars``): a transcript re-sends
    its whole history with every request, which stored as is grows with the square of its
    size. A request is linked when its text is verified to be that prefix (so the shared
    text is the recorded one, character for character), or when its reader declared it
    (``Event.prompt_chars``: a transcript's requests are the start of its last one). A
    declared row with no later recorded prompt, or one shorter than it, has no input.
    """

    def __init__(self, emit: Callable[[tuple[Any, ...]], None]) -> None:
        self.emit = emit
        self.chains: dict[Any, _Chain] = {}

    def add(self, row: dict[str, Any]) -> None:
        """One row, in seq order."""
        prompt = row["prompt"]
        if row["type"] != "llm_request" or (prompt is None and row["prompt_chars"] is None):
            self._emit(row)
            return
        chain = self.chains.setdefault(row["agent"], _Chain())
        if prompt is None:
            chain.declared.append(row)
            return
        top = chain.top
        if top is not None and not chain.declared and prompt.startswith(top["prompt"]):
            top["prompt_chars"] = len(top["prompt"])
            top["prompt"] = None
            chain.rows.append(top)
        elif top is not None:
            self._write(chain.rows, top)
            chain.rows = []
        chain.rows += chain.declared
        chain.declared, chain.top = [], row

    def _emit(self, row: dict[str, Any]) -> None:
        self.emit(tuple(row[c] for c in _COLUMNS))

    def _write(self, rows: list[dict[str, Any]], top: dict[str, Any]) -> None:
        for row in rows:
            if row["prompt_chars"] <= len(top["prompt"]):
                row["prompt_from"] = top["seq"]
            else:  # declared longer than the text it is the start of: no input
                row["prompt_chars"] = None
            self._emit(row)
        self._emit(top)

    def close(self) -> None:
        """Write the rows still held (the end of the trace)."""
        for chain in self.chains.values():
            if chain.top is not None:
                self._write(chain.rows, chain.top)
            for row in chain.declared:  # the start of no recorded prompt: no input
                row["prompt_chars"] = None
                self._emit(row)
        self.chains = {}


def _in_order(trace: Iterator[Event]) -> Iterator[Event]:
    """Events already in order, numbered 0..n-1 as they come."""
    for seq, e in enumerate(trace):
        d = dict(e.__dict__)
        d["seq"] = seq
        yield Event(**d)


def _guard(recs: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    yield from recs
