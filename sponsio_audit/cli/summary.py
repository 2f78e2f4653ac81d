"""The one summary line a run always ends with (on stderr), and what was not audited.

``scanned 4 files, 15 traces, 19 contracts: 16 violations (10 high) in 11
traces, 0 unverifiable`` goes to stderr even when the report goes to a
file, so a CI log always says what was checked (``-q`` and ``--silent``
drop it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def plural(n: int, word: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass(frozen=True)
class BaselineUse:
    """What a ``--baseline`` did: known violations suppressed, entries that matched nothing."""

    path: str
    suppressed: int
    stale: int


def line(data: Any, baseline: BaselineUse | None = None) -> str:
    """The summary line of a finished audit (after any baseline)."""
    n = data.totals
    severities = data.blamed_counts("severity")
    high = severities.get("high", 0)
    traces = len(data.blamed_counts("trace_id"))
    text = (
        f"scanned {plural(n['files'], 'file')}, {plural(n['traces'], 'trace')}, "
        f"{plural(n['contracts'], 'contract')}: {plural(sum(severities.values()), 'violation')} "
        f"({high} high) in {plural(traces, 'trace')}, "
        f"{data.verdict_counts.get('unverifiable', 0)} unverifiable"
    )
    if n.get("skipped"):
        text += f", {n['skipped']} skipped input(s)"
    if baseline is not None:
        text += (
            f"; baseline {baseline.path}: {baseline.suppressed} known suppressed, "
            f"{baseline.stale} stale"
        )
    return text


def idle_contracts(store: Any, contracts: Any) -> tuple[list[str], list[str], list[str]]:
    """Contracts whose agent has no event in any trace: (their ids, agents in traces, theirs)."""
    rows = store.con.cursor().execute(
        "SELECT DISTINCT agent FROM events WHERE agent IS NOT NULL ORDER BY 1"
    )
    present = [str(r[0]) for r in rows.fetchall()]
    idle = [c for c in contracts if c.agent != "*" and c.agent not in present]
    return [c.id for c in idle], present, sorted({c.agent for c in idle})


def idle_message(ids: list[str], present: list[str], agents: list[str]) -> str:
    """``3 contracts apply to no trace (agents in traces: planner; contracts are for: bot)``."""
    shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
    return (
        f"{plural(len(ids), 'contract')} {'applies' if len(ids) == 1 else 'apply'} "
        f"to no trace: {shown} "
        f"(agents in traces: {', '.join(present) or 'none'}; "
        f"contracts are for: {', '.join(agents)})"
    )
