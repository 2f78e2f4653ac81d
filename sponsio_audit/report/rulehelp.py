"""Help text of a contract as a rule: what its patterns mean and how to fix a violation.

Used by the SARIF rules (``help.text`` / ``help.markdown``, which code
scanning shows beside an alert) and by the HTML and Markdown reports.
The meaning of a pattern is its registry description; the advice comes
from the pattern's family (ordering, obligation, counting, arguments,
exclusion), since the fix for, say, every counting pattern is the same.
"""

from __future__ import annotations

from typing import Any

from sponsio_audit.ltl.patterns import lookup
from sponsio_audit.redact import clean
from sponsio_audit.report.text import code_span, md_text


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FAMILIES: dict[str, tuple[frozenset[str], str]] = {
    "ordering": (
        _names(
            "must_precede must_confirm workflow_step dry_run_before_commit "
            "backup_before_destructive destructive_action_gate approval_freshness "
            "confirm_after_source sanitized_before_sink untrusted_source_gate "
            "requires_permission ctx_required ctx_matches_required"
        ),
        "Make the agent take the required earlier step (check, confirmation, approval, "
        "permission) before the guarded call: enforce it in the agent's plan or in the "
        "tool itself, or run the contract in the guard (strategy block or escalate) so "
        "the call is stopped at run time.",
    ),
    "obligation": (
        _names("always_followed_by deadline required_steps audit_after required_steps_completion"),
        "An obligation was opened and never met before the trace ended (or within the "
        "step window): make the agent complete the required step. A trace that was cut "
        "short (crash, timeout, partial export) shows the same way: check that the "
        "trace is complete first.",
    ),
    "counting": (
        _names(
            "rate_limit idempotent bounded_retry cooldown loop_detection "
            "duplicate_call_limit irreversible_once token_budget latency_budget "
            "delegation_depth_limit"
        ),
        "Cap the calls where they are made: a retry or loop limit in the agent, "
        "idempotency keys in the tool, a budget checked before each step.",
    ),
    "arguments": (
        _names(
            "arg_blacklist arg_allowlist scope_limit arg_length_limit arg_value_range "
            "dangerous_bash_commands dangerous_sql_verbs data_intact no_pii "
            "prompt_injection_marker no_data_leak"
        ),
        "Validate or sanitize the arguments (or the model's input and output) before "
        "the call: reject the values the contract forbids, keep paths inside the "
        "allowed prefixes, and treat content from untrusted sources as data.",
    ),
    "exclusion": (
        _names(
            "mutual_exclusion never_together segregation_of_duty no_reversal "
            "tool_allowlist redirect_to_safe"
        ),
        "Remove the forbidden tool (or combination of tools) from what the agent may "
        "call, or route it to the safe alternative.",
    ),
}
GENERIC = (
    "Read the formula: the blamed step is the first event at which it can no longer "
    "hold. Change the agent so that the step does not happen, or the contract if the "
    "behaviour is intended."
)
INSPECT = (
    "See one trace with `sponsio-audit explain --trace TRACE_ID`; the result's related "
    "locations name the trace file, record and span of each offending event."
)


def advice(pattern: str | None) -> str:
    """How to fix a violation of ``pattern`` (generic for ``ltl`` or unknown patterns)."""
    for names, text in _FAMILIES.values():
        if pattern in names:
            return text
    return GENERIC


def meaning(pattern: str | None) -> str:
    """What ``pattern`` requires, from the pattern registry ("" when not a pattern)."""
    spec = lookup(pattern) if pattern else None
    return spec.description if spec is not None else ""


def guarantees(contract: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per guarantee: text, pattern, meaning, advice, skip reason."""
    out = []
    for text, pattern, skipped in zip(
        contract["guarantees"], contract["patterns"], contract["skipped"], strict=True
    ):
        out.append(
            {
                "text": text,
                "pattern": pattern,
                "meaning": meaning(pattern),
                "advice": advice(pattern),
                "skipped": skipped,
            }
        )
    return out


def text(contract: dict[str, Any]) -> str:
    """Plain-text help of a contract."""
    lines = [clean(contract["description"] or contract["id"], 300), ""]
    for g in guarantees(contract):
        what = f"{g['pattern']}: {g['meaning']}" if g["meaning"] else "formula"
        lines.append(f"- {clean(what, 300)}")
        lines.append(f"  formula: {clean(g['text'], 1000)}")
        if g["skipped"]:
            lines.append(f"  not evaluated offline: {clean(g['skipped'], 300)}")
        lines.append(f"  how to fix: {g['advice']}")
    lines += ["", INSPECT]
    return "\n".join(lines)


def markdown(contract: dict[str, Any]) -> str:
    """Markdown help of a contract (configuration text in code spans: inert)."""
    lines = [
        f"**{code_span(contract['id'], 200, cell=False)}** "
        f"(severity {code_span(contract['severity'], 20, cell=False)}, "
        f"strategy {code_span(contract['strategy'], 20, cell=False)})",
        "",
    ]
    if contract["description"]:
        lines += [md_text(contract["description"], 300), ""]
    for g in guarantees(contract):
        head = code_span(g["pattern"], 60, cell=False) if g["pattern"] else "formula"
        lines.append(f"- {head}: {g['meaning'] or 'a temporal formula'}")
        lines.append(f"  - formula: {code_span(g['text'], 1000, cell=False)}")
        if g["skipped"]:
            lines.append(f"  - not evaluated offline: {code_span(g['skipped'], 300, cell=False)}")
        lines.append(f"  - how to fix: {g['advice']}")
    lines += ["", INSPECT]
    return "\n".join(lines)
