"""Sponsio observability span schema 1.0.0: span names and attribute keys.

The single source of the names the guard exports (``otlp_export``) and the
ingest side recognises (CONVENTIONS.md "Sponsio span schema 1.0.0", seed
document ``observability.md``). Semantic versioning: a major bump renames or
removes attributes, a minor bump adds some. Bumping ``SCHEMA_VERSION``
without updating the documentation is a release-blocking bug.
"""

from __future__ import annotations

SCHEMA_VERSION = "1.0.0"
SCHEMA_URL = f"https://sponsio.dev/schemas/observability/{SCHEMA_VERSION}"
SCOPE_NAME = "sponsio_audit.guard"

# span names, root first
SPAN_AGENT_TURN = "sponsio.agent_turn"
SPAN_CONTRACT_CHECK = "sponsio.contract_check"
SPAN_PRECONDITION = "sponsio.precondition"
SPAN_GUARANTEE = "sponsio.guarantee"
SPAN_VIOLATION = "sponsio.violation"
SPAN_ENFORCEMENT = "sponsio.enforcement"

# root: sponsio.agent_turn
AGENT_ID = "sponsio.agent_id"
HOST = "sponsio.host"
CONVERSATION_ID = "sponsio.conversation_id"
EVENT_TOOL = "sponsio.event.tool"
EVENT_TYPE = "sponsio.event.type"
EVENT_TOOL_ARGS = "sponsio.event.tool_args"
OUTCOME_BLOCKED = "sponsio.outcome.blocked"
OUTCOME_STATUS = "sponsio.outcome.status"  # ok, violated, error
CONTRACTS_CHECKED = "sponsio.contracts_checked"
DET_VIOLATIONS = "sponsio.det_violations"
TURN_DURATION_NS = "sponsio.turn.duration_ns"

# sponsio.contract_check
CONTRACT_LABEL = "sponsio.contract.label"
CONTRACT_ID = "sponsio.contract.id"
CONTRACT_SOURCE = "sponsio.contract.source"
CONTRACT_ASSUMPTION_HOLDS = "sponsio.contract.assumption_holds"
CONTRACT_ENFORCEMENT_HOLDS = "sponsio.contract.enforcement_holds"

# sponsio.precondition / sponsio.guarantee
CONSTRAINT_DESC = "sponsio.constraint.desc"
CONSTRAINT_FORMULA = "sponsio.constraint.formula"
CONSTRAINT_RESULT = "sponsio.constraint.result"  # ok, violated
CONSTRAINT_FRESH = "sponsio.constraint.fresh"
CONSTRAINT_EVAL_POS = "sponsio.constraint.eval_pos"

# sponsio.violation
VIOLATION_KIND = "sponsio.violation.kind"  # assumption, guarantee, liveness
VIOLATION_SEVERITY = "sponsio.violation.severity"  # HIGH, MEDIUM, LOW
VIOLATION_EVIDENCE = "sponsio.violation.evidence"
VIOLATION_POLICY_REF = "sponsio.violation.policy_ref"

# sponsio.enforcement
ENFORCEMENT_STRATEGY = "sponsio.enforcement.strategy"
ENFORCEMENT_ACTION = "sponsio.enforcement.action"
ENFORCEMENT_RETRY_PROMPT = "sponsio.enforcement.retry_prompt"
ENFORCEMENT_FALLBACK_ACTION = "sponsio.enforcement.fallback_action"

STRATEGY_NAMES = {
    "block": "DetBlock",
    "escalate": "EscalateToHuman",
    "warn": "WarnOnly",
    "redirect": "RedirectToSafe",
}
"""Contract strategy (``Strategy.kind``) → the schema's ``sponsio.enforcement.strategy`` value."""

ARGS_LIMIT = 4096
"""Bytes of tool-args JSON kept in exported spans when truncation is on."""
RETRY_PROMPT_LIMIT = 2048
"""Bytes of a retry prompt kept in exported spans when truncation is on."""
