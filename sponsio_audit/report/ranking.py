"""Which violations a capped list shows: by severity, then round-robin across contracts.

A list cut at ``limit`` (the terminal's and Markdown's top lists, the
HTML table past its row cap) must not let one noisy contract hide the
others: within one severity the violations are dealt one contract at a
time (contracts by id, each contract's violations in report order), so
the first ``k`` rows of a severity show ``k`` different contracts when
there are that many. ``limit`` 0 or None means every violation.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import zip_longest
from typing import Any

from sponsio_audit.report.data import SEVERITY_RANK

DEFAULT_LIMIT = 20


def spread(blamed: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``blamed`` violations by severity rank, round-robin across contracts within each."""
    by_rank: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for v in blamed:
        rank = SEVERITY_RANK.get(v["severity"], len(SEVERITY_RANK))
        by_rank.setdefault(rank, {}).setdefault(v["contract_id"], []).append(v)
    out: list[dict[str, Any]] = []
    for rank in sorted(by_rank):
        lanes = [by_rank[rank][cid] for cid in sorted(by_rank[rank])]
        for row in zip_longest(*lanes):
            out.extend(v for v in row if v is not None)
    return out


def top(blamed: Iterable[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """The first ``limit`` violations of ``spread`` (all of them for 0 or None)."""
    ranked = spread(blamed)
    return ranked if not limit else ranked[:limit]


def shown_of(shown: int, total: int, how: str) -> str:
    """``"N of M"`` wording for a capped list, saying how to see all when some are left out."""
    if shown >= total:
        return f"all {total}"
    return f"{shown} of {total}; {how}"
