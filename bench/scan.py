"""End-to-end ``scan`` benchmark: ~200k OTLP/JSON-lines spans, 20 contracts, beside Sponsio.

Generates ``bench/ingest.py``'s GenAI file (``--spans``, default 200,000),
then runs what ``sponsio-audit scan FILE -f json`` runs, stage by stage in
this process: ingest into an in-memory store, ``api.audit`` (events query,
columnar engine, verdict and violation tables, saving them), the report
tables (``report.data.load``), the matched arguments of the blamed events
(``baseline.with_matches``, which ``scan`` runs for the fingerprints) and
the JSON rendering. Prints wall and CPU
(``time.process_time``) seconds per stage, spans/s end to end, and the load
average (the machine is shared: CPU time is the steadier figure; best of
``--repeat`` by CPU).

Then Sponsio 0.2.0a21 (``TraceVerifier.check_contract``, liveness included)
checks the same 20 patterns on the same tool events (the store's
``tool_call``, ``llm_request`` and ``llm_response`` events, as Sponsio
``Event``s) of ``--sample`` traces; its events/s is extrapolated and set
beside ours (events of the store / end-to-end seconds).

    python bench/scan.py                     # 200,000 spans
    python bench/scan.py --spans 20000 --sample 20 --repeat 1   # a quick run
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import generate  # bench/ingest.py

from sponsio_audit import api
from sponsio_audit.event import event_from_row
from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ltl import patterns
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.report import baseline, jsonfmt
from sponsio_audit.report import data as report_data

TOOL = "search_hotels"  # the file's one tool
PATTERNS: list[tuple[str, list[Any]]] = [
    ("must_precede", [TOOL, "book_hotel"]),
    ("must_confirm", ["book_hotel"]),
    ("always_followed_by", ["book_hotel", TOOL]),
    ("no_reversal", ["book_hotel", "cancel_booking"]),
    ("rate_limit", [TOOL, 5]),
    ("idempotent", [TOOL]),  # violated: 3 calls a trace
    ("bounded_retry", [TOOL, 2]),
    ("cooldown", [TOOL, 1]),
    ("deadline", ["book_hotel", TOOL, 3]),
    ("mutual_exclusion", [TOOL, "delete_account"]),
    ("tool_allowlist", [["book_hotel"]]),  # violated: every call offends
    ("arg_blacklist", [TOOL, "city", ["Berlin", "^Rome$"]]),
    ("arg_allowlist", [TOOL, "city", ["^Paris$", "^London$"]]),
    ("scope_limit", ["write_file", ["/workspace"]]),
    ("loop_detection", [TOOL, 2]),
    ("token_budget", [100_000]),
    ("no_pii", []),
    ("never_together", [TOOL, "delete_account"]),
    ("duplicate_call_limit", [TOOL, "Paris", 3]),
    ("irreversible_once", ["book_hotel"]),
]
"""20 patterns that both tools have, over the file's tool names."""


def contracts() -> list[Contract]:
    """Our 20 contracts (one pattern each, every agent)."""
    out = []
    for name, args in PATTERNS:
        r = patterns.build(name, args or None)
        out.append(Contract(name, "*", (r.clause(),), per_agent=False))
    return out


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def run_scan(path: Path, cs: list[Contract]) -> tuple[dict[str, tuple[float, float]], Any, str]:
    """One scan, stage by stage: {stage: (wall, cpu)}, the store and the JSON text."""
    stages: dict[str, tuple[float, float]] = {}
    store = Store.open(None)
    s, w, c = _timed(lambda: ingest([str(path)], store, jobs=1))
    stages["ingest"] = (w, c)
    _, w, c = _timed(lambda: api.audit(store, cs))
    stages["audit"] = (w, c)
    data, w, c = _timed(lambda: report_data.load(store, timelines=False))
    stages["report tables"] = (w, c)
    data, w, c = _timed(lambda: baseline.with_matches(store, data))
    stages["matched arguments"] = (w, c)
    text, w, c = _timed(lambda: jsonfmt.render(data))
    stages["rendering (json)"] = (w, c)
    return stages, (store, s), text


# ------------------------------------------------------------------ Sponsio


def sponsio_rate(store: Any, n_traces: int) -> tuple[float, int, int, str]:
    """Sponsio's events/s on the tool events of ``n_traces`` traces: (rate, events, traces,
    version)."""
    import sponsio
    from sponsio.generation.dsl_to_contract import get_available_patterns
    from sponsio.models.agent import Agent
    from sponsio.models.contract import Contract as SContract
    from sponsio.models.trace import Event as SEvent
    from sponsio.models.trace import Trace as STrace
    from sponsio.runtime.verifier import TraceVerifier

    ids = [
        r[0]
        for r in store.con.execute(
            "SELECT DISTINCT trace_id FROM events ORDER BY trace_id LIMIT ?", [n_traces]
        ).fetchall()
    ]
    rows = (
        store.con.sql(
            "SELECT * FROM events WHERE trace_id IN (SELECT unnest($ids)) ORDER BY trace_id, seq",
            params={"ids": ids},
        )
        .to_arrow_table()
        .to_pylist()
    )
    by_trace: dict[str, list[Any]] = {}
    for r in rows:
        e = event_from_row(r)
        agent = e.agent or "agent"
        i = len(by_trace.setdefault(e.trace_id, []))
        match e.type:
            case "tool_call":
                ev = SEvent(i, agent, "tool_call", tool=e.tool, args=e.args, content=e.content)
            case "llm_response":
                tokens = {"tokens": e.tokens_total} if e.tokens_total is not None else None
                ev = SEvent(i, agent, "llm_response", args=tokens, content=e.content)
            case "llm_request":
                ev = SEvent(i, agent, "llm_request", content=e.prompt)
            case _:
                continue
        by_trace[e.trace_id].append(ev)
    registry = get_available_patterns()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = {e.agent for t in by_trace.values() for e in t}
        agents = {a: Agent(id=a, permissions=[]) for a in names}
        specs = [(a, [registry[name](*args) for name, args in PATTERNS]) for a in agents]
        scs = {a: [SContract(agent=agents[a], guarantee=f) for f in fs] for a, fs in specs}
        traces = [STrace(events=evs) for evs in by_trace.values()]
        events = sum(len(t.events) for t in traces)
        t0 = time.process_time()
        for t in traces:
            for a in {e.agent for e in t.events}:
                for sc in scs[a]:
                    v = TraceVerifier(agents=agents)
                    v.sync_from_contracts(t, [sc])
                    v.check_contract(sc, include_liveness=True)
        secs = time.process_time() - t0
    return events / secs, events, len(traces), getattr(sponsio, "__version__", "?")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spans", type=int, default=200_000)
    p.add_argument("--sample", type=int, default=50, help="traces Sponsio checks")
    p.add_argument("--repeat", type=int, default=2, help="scans (best CPU is reported)")
    a = p.parse_args(argv)
    cs = contracts()
    with tempfile.TemporaryDirectory() as d:
        path = generate(Path(d), a.spans, "jsonl")
        mb = path.stat().st_size / 1e6
        best: dict[str, tuple[float, float]] | None = None
        for _ in range(a.repeat):
            stages, (store, s), text = run_scan(path, cs)
            if best is None or sum(c for _, c in stages.values()) < sum(
                c for _, c in best.values()
            ):
                best, keep = stages, (store, s, text)
    assert best is not None
    store, s, text = keep
    wall = sum(w for w, _ in best.values())
    cpu = sum(c for _, c in best.values())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"scan of {s.spans:,} spans ({mb:,.0f} MB OTLP/JSON lines) -> {s.events:,} events,"
        f" {s.traces:,} traces; {len(cs)} contracts; JSON report {len(text) / 1e6:,.1f} MB"
    )
    for name, (w, c) in best.items():
        print(f"  {name:18} {w:7.2f} s wall  {c:7.2f} s CPU  {c / s.spans * 1e6:7.1f} µs/span CPU")
    print(f"  {'total':18} {wall:7.2f} s wall  {cpu:7.2f} s CPU")
    print(
        f"end to end: {s.spans / wall:,.0f} spans/s wall, {s.spans / cpu:,.0f} spans/s CPU;"
        f" {s.events / cpu:,.0f} events/s CPU (best of {a.repeat}; load average {load})"
    )
    violations = json.loads(text)["summary"]
    print(f"  verdicts {violations.get('verdicts')}")
    rate, events, traces, version = sponsio_rate(store, a.sample)
    print(
        f"Sponsio {version} TraceVerifier.check_contract, {len(PATTERNS)} contracts:"
        f" {traces} traces, {events:,} events, {rate:,.0f} events/s CPU"
        f" (extrapolated to {s.events:,} events: {s.events / rate:,.0f} s)"
    )
    print(f"ratio (our end-to-end events/s CPU / Sponsio's): {s.events / cpu / rate:,.1f}x")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss:,.0f} MB")


if __name__ == "__main__":
    main()
