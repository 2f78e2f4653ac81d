"""The instrumented fixtures and their ground truth (fixtures/instrumented/, made by the
real instrumentations; the truth is what the generator did, not what the spans say).

A *case* is a combination plus which files of it are read; ``RECORDS`` says what
that case's instrumentation records (so what the events must and must not hold):

- ``all``: tool names, args and results, prompts, outputs, token usage;
- ``names``: tool names and token usage only (no content capture: empty log bodies);
- ``none``: token usage and finish reasons only (the spans of a logs-mode
  instrumentation read without its logs): each tool-calling response is followed
  by one tool call with no tool (SEMANTICS.md §5).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.ingest import Store, ingest

REPO = Path(__file__).resolve().parents[2]
FIX = REPO / "fixtures" / "instrumented"
PACK = Path(__file__).resolve().parent / "pack.yaml"
SYSTEM = "You are a support agent for an online shop. Use the tools."
SERVICE = "support-agent"

LOGS = ("openai_v2_logs", "openai_v2_nocontent", "openai_v2_events")
"""Combinations that export OTLP log records."""
SPANS = (
    "openai_v2_latest",
    "openinference_openai",
    "openllmetry_openai",
    "openinference_langchain",
    "openinference_langchain_genai",
    "openllmetry_langchain",
)
"""Combinations that put everything on the spans."""
STREAM_NO_FINISH = frozenset(LOGS)
"""Measured: the official instrumentation (2.4b0, both paths) records no finish reason
on a streamed chat span, so without the logs nothing says whether it called tools."""


@dataclass(frozen=True)
class Case:
    """One way of reading a combination's files."""

    combo: str
    files: tuple[str, ...]  # file names under FIX, in ingest order
    records: str  # all | names | none

    @property
    def id(self) -> str:
        return f"{self.combo}:{'+'.join(f.split('.', 1)[1] for f in self.files)}"


def _cases() -> list[Case]:
    out = []
    for c in SPANS:
        for ext in ("jsonl.gz", "pb.gz"):
            out.append(Case(c, (f"{c}.traces.{ext}",), "all"))
    for c in LOGS:
        rec = "names" if c == "openai_v2_nocontent" else "all"
        out.append(Case(c, (f"{c}.traces.jsonl.gz", f"{c}.logs.jsonl.gz"), rec))
        out.append(Case(c, (f"{c}.logs.pb.gz", f"{c}.traces.pb.gz"), rec))  # logs first
        out.append(Case(c, (f"{c}.logs.pb.gz", f"{c}.traces.jsonl.gz"), rec))  # mixed formats
        out.append(Case(c, (f"{c}.traces.pb.gz",), "none"))  # spans without their logs
    out.append(Case("openai_v2_logs", ("openai_v2_logs.collector.jsonl.gz",), "all"))
    return out


CASES = _cases()


def truth(combo: str) -> dict[str, Any]:
    """The ground truth the generator wrote for a combination."""
    return json.loads((FIX / f"{combo}.truth.json").read_text())


def scenarios(combo: str) -> dict[str, dict[str, Any]]:
    """Scenario name → its truth (trace id, steps)."""
    return {s["name"]: s for s in truth(combo)["scenarios"]}


def load(*files: str | Path) -> Store:
    """A fresh in-memory store with the files ingested in the order given."""
    store = Store.open(None)
    ingest([FIX / f if isinstance(f, str) else f for f in files], store)
    return store


def events_by_trace(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Events per trace id, in sequence order."""
    cur = store.con.execute("SELECT * FROM events ORDER BY trace_id, seq")
    names = [d[0] for d in cur.description]
    out: dict[str, list[dict[str, Any]]] = {}
    for row in cur.fetchall():
        e = dict(zip(names, row, strict=True))
        out.setdefault(e["trace_id"], []).append(e)
    return out


@pytest.fixture(params=CASES, ids=lambda c: c.id)
def case(request: pytest.FixtureRequest) -> Case:
    """Every case."""
    if not FIX.is_dir():
        pytest.fail(f"instrumented fixtures missing at {FIX}")
    return request.param
