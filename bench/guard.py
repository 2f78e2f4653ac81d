"""Latency of ``Guard.guard_before`` for 1 and 20 contracts at trace lengths 10, 1 000, 10 000.

The guard keeps constant state per operator, so the cost per call must not
grow with the trace: this prints p50 / p99 per call (session log off, no
exporter) after the guard has already let ``n`` calls through. The 20
contracts are safety and liveness patterns of SEMANTICS.md §6 built with
``ltl.patterns`` (strategy ``warn`` so every call is appended and the trace
really grows). Target: p50 ≤ 20 µs with 20 contracts. The machine may be
shared, so each cell is measured ``--runs`` times (a fresh guard each time)
and the medians are printed.

Run: ``python bench/guard.py [--runs N] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import time
from typing import Any

from sponsio_audit.guard import Guard
from sponsio_audit.ltl import patterns
from sponsio_audit.ltl.contract import Contract, Strategy

SPECS: list[tuple[str, list[object]]] = [
    ("must_precede", ["verify", "pay"]),
    ("must_confirm", ["delete"]),
    ("no_reversal", ["commit", "rollback"]),
    ("rate_limit", ["pay", 5]),
    ("idempotent", ["init"]),
    ("bounded_retry", ["fetch", 3]),
    ("cooldown", ["email", 2]),
    ("workflow_step", ["plan", "act"]),
    ("mutual_exclusion", ["export", "wipe"]),
    ("tool_allowlist", [["verify", "pay", "fetch", "search", "email", "plan", "act", "write"]]),
    ("redirect_to_safe", ["refund", "log_refund"]),
    ("requires_permission", ["deploy", "admin"]),
    ("arg_blacklist", ["bash", "cmd", ["rm -rf", "mkfs"]]),
    ("arg_allowlist", ["fetch", "url", ["^https://"]]),
    ("scope_limit", ["write", ["/tmp", "/work"]]),
    ("loop_detection", ["search", 4]),
    ("deadline", ["plan", "act", 3]),
    ("always_followed_by", ["pay", "email"]),
    ("must_precede", ["plan", "write"]),
    ("rate_limit", ["email", 50]),
]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("plan", {}),
    ("act", {}),
    ("verify", {}),
    ("pay", {"amount": 3}),
    ("fetch", {"url": "https://example.com"}),
    ("search", {"q": "x"}),
    ("email", {"to": "a@b"}),
    ("write", {"path": "/tmp/out.txt"}),
]


def contracts(n: int) -> list[Contract]:
    out = []
    for i, (name, args) in enumerate(SPECS[:n]):
        clause = patterns.build(name, args).clause()
        out.append(Contract(f"c{i}.{name}", "*", (clause,), strategy=Strategy("warn")))
    return out


def measure(n_contracts: int, length: int, samples: int = 2000) -> tuple[float, float]:
    g = Guard(contracts(n_contracts), "bench", session_log=False, exporter=False)
    for i in range(length):
        g.guard_before(*CALLS[i % len(CALLS)])
    gc.collect()
    times = []
    for i in range(samples):
        tool, args = CALLS[i % len(CALLS)]
        t0 = time.perf_counter_ns()
        g.guard_before(tool, args)
        times.append(time.perf_counter_ns() - t0)
    times.sort()
    p50 = statistics.median(times) / 1000
    p99 = times[int(len(times) * 0.99) - 1] / 1000
    return p50, p99


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", action="store_true", help="profile 20 contracts at length 1000")
    ap.add_argument("--runs", type=int, default=5, help="measurements per cell (medians shown)")
    opts = ap.parse_args()
    if opts.profile:
        g = Guard(contracts(20), "bench", session_log=False, exporter=False)
        prof = cProfile.Profile()
        prof.enable()
        for i in range(5000):
            g.guard_before(*CALLS[i % len(CALLS)])
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        return
    print(f"{'contracts':>9} {'trace length':>12} {'p50 µs':>8} {'p99 µs':>8}")
    for n in (1, 20):
        for length in (10, 1_000, 10_000):
            runs = [measure(n, length) for _ in range(max(1, opts.runs))]
            p50 = statistics.median(r[0] for r in runs)
            p99 = statistics.median(r[1] for r in runs)
            print(f"{n:>9} {length:>12} {p50:>8.1f} {p99:>8.1f}")


if __name__ == "__main__":
    main()
