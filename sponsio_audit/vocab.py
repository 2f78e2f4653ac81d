"""The project's vocabularies, each defined once (SEMANTICS.md §4.2, §5, §6).

Verdict names, violation kinds, severities, strategies and token kinds are
read by the evaluators, the config loader, the guard and the reports; the
tuples here are the one place their spelling and order live. Codes of the
columnar result (``ltl.columnar``) are indices into ``VERDICTS`` and
``KINDS``.
"""

from __future__ import annotations

PASS = "pass"
VIOLATED = "violated"
UNVERIFIABLE = "unverifiable"
NOT_APPLICABLE = "not_applicable"
SKIPPED = "skipped"
VERDICTS = (PASS, VIOLATED, UNVERIFIABLE, NOT_APPLICABLE, SKIPPED)
"""Verdict names, in report order (also the codes of the columnar result)."""

GUARANTEE = "guarantee"
LIVENESS = "liveness"
ASSUMPTION = "assumption"
KINDS = (GUARANTEE, LIVENESS, ASSUMPTION)
"""Violation kinds: a broken guarantee, an obligation left open, a broken assumption."""

SEVERITIES = ("high", "medium", "low")
"""Contract severities, most severe first."""

STRATEGIES = ("block", "escalate", "warn", "redirect")
"""What a guard does on a violation."""

TOKEN_KINDS = ("input", "output", "total")
"""Kinds of ``token_count``."""

ASSUMPTION_UNKNOWN = "assumption unknown"
"""Reason of an unverifiable verdict whose assumption is unknown on the trace."""


def assumption_skipped(reason: str | None) -> str:
    """Reason of a guarantee skipped because an assumption cannot be evaluated offline."""
    return f"assumption skipped: {reason}"
