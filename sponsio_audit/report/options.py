"""``RenderOptions``: what a renderer needs beyond the audit's tables (CLI flags).

``fail_on`` is the lowest severity that fails the run (``none``: never), so
that a format with its own pass/fail notion (JUnit) agrees with the exit
code; ``limit`` caps the top lists (0: every violation).
"""

from __future__ import annotations

from dataclasses import dataclass

from sponsio_audit.report.data import SEVERITY_RANK
from sponsio_audit.report.ranking import DEFAULT_LIMIT

FAIL_ON = ("none", "low", "medium", "high")


@dataclass(frozen=True)
class RenderOptions:
    """Flags of one rendering: the failing threshold and the top-list cap."""

    fail_on: str = "high"
    limit: int = DEFAULT_LIMIT

    def fails(self, severity: str) -> bool:
        """True when a violation of ``severity`` makes the run fail (exit code 1)."""
        if self.fail_on == "none":
            return False
        return SEVERITY_RANK.get(severity, 0) <= SEVERITY_RANK[self.fail_on]
