"""The names existing Sponsio configurations use (SEMANTICS.md §6.1).

``claim_requires_evidence`` and ``underdetermined_must_clarify`` read
Sponsio's ``evidence`` events (claim verdicts of its cloud service, as
Sponsio 0.2.0a21 grounds them): the atoms are in ``atoms.online_terms``.

Aliases of §6 patterns keep the name they were written with (so a YAML
round trip writes them back unchanged); the other names are factories of
their own; LLM-judge names load as clauses skipped with "needs an LLM
judge". Parameter names follow Sponsio's pattern library so that
arguments given by name load too. An alias inherits its target's evidence
sentence (its arguments keep their positions); every other name that can
be violated has a sentence of its own.
"""

from __future__ import annotations

import re
from dataclasses import replace
from importlib.resources import files
from typing import Any

import yaml

from sponsio_audit.ltl.ast import (
    And,
    Atom,
    Cmp,
    Eventually,
    Formula,
    Implies,
    Not,
    Num,
    Once,
    OnceWithin,
    Since,
)
from sponsio_audit.ltl.patterns.core import CORE
from sponsio_audit.ltl.patterns.formulas import G, c, conj, disj, le, when_called
from sponsio_audit.ltl.patterns.params import Param, PatternArgError, parse_params
from sponsio_audit.ltl.patterns.spec import PatternSpec, arg
from sponsio_audit.regexes import literal

_CORE = {s.name: s for s in CORE}


def _alias(name: str, target: str, desc_template: str = "") -> PatternSpec:
    base = _CORE[target]
    return replace(
        base,
        name=name,
        description=f"{base.description} (= {target})",
        alias_of=target,
        desc_template=desc_template or base.desc_template,
    )


# The defaults Sponsio 0.2.0a21 ships for its two list patterns, read as data from
# packs/lists/ (taken from its wheel), so a Sponsio pack flags here what it flags there.
_LISTS = yaml.safe_load(
    files("sponsio_audit.packs").joinpath("lists/sponsio-0.2.0a21.yaml").read_text("utf-8")
)
DANGEROUS_BASH_COMMANDS: tuple[str, ...] = tuple(_LISTS["dangerous_bash_commands"])
"""Sponsio's default: regexes searched in the bash call's arguments (recursive rm in any
flag spelling, sudo, chmod, sed -i, python -c, overwrites of /app)."""
DANGEROUS_SQL_VERBS: tuple[str, ...] = tuple(_LISTS["dangerous_sql_verbs"]["verbs"])
"""Sponsio's default verbs: DROP, TRUNCATE, DELETE, ALTER."""
_WORD = re.compile(r"[A-Za-z_]+")


def _bash_regex(command: str, forbidden: tuple[str, ...]) -> str:
    """The shipped list's entries are regexes; a list given in a contract is literal text."""
    return command if forbidden == DANGEROUS_BASH_COMMANDS else literal(command)


def _sql_regex(verb: str) -> str:
    """As Sponsio: a plain word is matched whole and in any case, anything else in any case."""
    return rf"(?i)\b{verb}\b" if _WORD.fullmatch(verb) else f"(?i){verb}"


JUDGE_NAMES: tuple[str, ...] = (
    "jailbreak_free",
    "toxic_free",
    "harmful",
    "injection_free",
    "semantic_pii_free",
    "hallucination_free",
    "scope_respect",
)


def _num(x: int | float) -> Num:
    return Num(x)


def _value_range(tool: str, field: str, min_val: Any, max_val: Any) -> Formula:
    v = Atom("arg_numeric", (tool, field))
    parts: list[Formula] = []
    if min_val is not None:
        parts.append(Cmp("<=", _num(min_val), v))
    if max_val is not None:
        parts.append(Cmp("<=", v, _num(max_val)))
    if not parts:
        raise PatternArgError("arg_value_range needs min_val or max_val")
    return when_called(tool, conj(parts))


def _range_text(a: tuple[Any, ...]) -> str:
    """Where a value fell for arg_value_range: below min, above max, or outside both."""
    lo, hi = (a[i] if i < len(a) else None for i in (2, 3))
    if lo is None:
        return f"above {arg(a, 3)}"
    if hi is None:
        return f"below {arg(a, 2)}"
    return f"outside [{arg(a, 2)}, {arg(a, 3)}]"


def _since_clear(trigger: Formula, sources: tuple[str, ...], clear: str) -> Formula:
    """``G(trigger ∧ O src → ¬src S clear)``: since the last source call, `clear` happened."""
    src = disj(c(s) for s in sources)
    return G(Implies(And(trigger, Once(src)), Since(Not(src), c(clear))))


def _claim_obligation(pred: str) -> Formula:
    """``G(claim_emitted(p) → evidence_verdict(p, PASS))``: decided at the evidence event."""
    return G(Implies(Atom("claim_emitted", (pred,)), Atom("evidence_verdict", (pred, "PASS"))))


def _clarify_obligation(pred: str) -> Formula:
    """``G(evidence_verdict(p, UNDERDETERMINED) → evidence_action(p, clarify))``."""
    return G(
        Implies(
            Atom("evidence_verdict", (pred, "UNDERDETERMINED")),
            Atom("evidence_action", (pred, "clarify")),
        )
    )


def _judge(name: str) -> PatternSpec:
    return PatternSpec(
        name,
        (Param("args", "text", default=()),),
        "LLM-judged constraint: not evaluated offline, listed as skipped",
        lambda **_: Atom(name),
        judge=True,
    )


_S = PatternSpec
SPECS: tuple[PatternSpec, ...] = (
    _alias("never_together", "mutual_exclusion"),
    _alias("irreversible_once", "idempotent", "{action} is irreversible: at most once"),
    _alias("audit_after", "always_followed_by", "{trigger} must be followed by audit {response}"),
    replace(
        _alias("dry_run_before_commit", "must_precede", "{before} dry run must precede {after}"),
        params=parse_params("dry_run:tool", "commit:tool"),
        factory=lambda dry_run, commit: when_called(commit, Once(c(dry_run))),
        desc_template="{dry_run} dry run must precede {commit}",
    ),
    replace(
        _alias("backup_before_destructive", "must_precede"),
        params=parse_params("backup:tool", "action:tool"),
        factory=lambda backup, action: when_called(action, Once(c(backup))),
        desc_template="{backup} backup must precede destructive {action}",
    ),
    replace(
        _alias("required_steps_completion", "required_steps"),
        params=parse_params("trigger:tool", "required_set:tools"),
        factory=lambda trigger, required_set: when_called(
            trigger, conj(Eventually(c(s)) for s in required_set)
        ),
        desc_template="every {trigger} must be followed by all of [{required_set}]",
    ),
    _S(
        "arg_length_limit",
        parse_params("tool:tool", "param:field", "max_chars:int", max_chars_min=0),
        "field `param` of every call of `tool` has at most n characters",
        lambda tool, param, max_chars: when_called(
            tool, le(Atom("arg_length", (tool, param)), max_chars)
        ),
        desc_template="{tool}.{param} must not exceed {max_chars} characters",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} with {arg(a, 1)} longer than {arg(a, 2)} characters"
        ),
    ),
    _S(
        "arg_value_range",
        parse_params(
            "tool:tool",
            "field:field",
            "min_val:number",
            "max_val:number",
            min_val=None,
            max_val=None,
        ),
        "numeric field of every call of `tool` lies in [min, max]",
        _value_range,
        desc_template="{tool}.{field} must lie in [{min_val}, {max_val}]",
        evidence=lambda a, t, s, o, ot: f"{t} called at step {s} with {arg(a, 1)} {_range_text(a)}",
    ),
    _S(
        "duplicate_call_limit",
        parse_params("tool:tool", "args_pattern:regex", "max_count:int", max_count_min=0),
        "at most n calls of `tool` whose arguments match the regex",
        lambda tool, args_pattern, max_count: when_called(
            tool, le(Atom("count_with", (tool, args_pattern)), max_count)
        ),
        desc_template="{tool} calls matching the pattern at most {max_count} times",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s}: more than {arg(a, 2)} calls of {arg(a, 0)} "
            "with matching arguments"
        ),
    ),
    _S(
        "dangerous_bash_commands",
        parse_params("forbidden:values", forbidden=DANGEROUS_BASH_COMMANDS),
        "no bash call contains a listed command (literal text; Sponsio's regexes by default)",
        lambda forbidden: when_called(
            "bash",
            conj(
                Not(Atom("arg_has", ("bash", _bash_regex(str(p), tuple(forbidden)))))
                for p in forbidden
            ),
        ),
        desc_template="bash commands [{forbidden}] are banned",
        evidence=lambda a, t, s, o, ot: f"{t} called at step {s} with a banned command",
    ),
    _S(
        "dangerous_sql_verbs",
        parse_params(
            "tool:tool", "forbidden:values", tool="execute_sql", forbidden=DANGEROUS_SQL_VERBS
        ),
        "field `query` of the SQL tool uses no listed verb (whole word, any case)",
        lambda tool, forbidden: when_called(
            tool,
            conj(
                Not(Atom("arg_field_has", (tool, "query", _sql_regex(str(v))))) for v in forbidden
            ),
        ),
        desc_template="{tool} must not use [{forbidden}]",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} with a query that uses a forbidden verb"
        ),
    ),
    _S(
        "data_intact",
        parse_params("bound_tool:regex", "original_paths:paths"),
        "bash calls matching the command regex touch only paths under the prefixes",
        lambda bound_tool, original_paths: G(
            Implies(
                Atom("arg_has", ("bash", bound_tool)),
                Atom("arg_paths_within", ("bash", *original_paths)),
            )
        ),
        desc_template="{bound_tool} must use only original data from [{original_paths}]",
        evidence=lambda a, t, s, o, ot: f"{t} called at step {s} with a path outside {arg(a, 1)}",
    ),
    _S(
        "destructive_action_gate",
        parse_params("tool:tool", "approver_role:perm", approver_role="approver"),
        "every call of `tool` has an earlier confirm_<tool> by an agent with the role",
        lambda tool, approver_role: when_called(
            tool, Once(And(c(f"confirm_{tool}"), Atom("perm", (approver_role,))))
        ),
        desc_template="{tool} is destructive and requires approval from {approver_role}",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} without a prior confirm_{arg(a, 0)} by an agent "
            f"with role {arg(a, 1)}"
        ),
    ),
    _S(
        "untrusted_source_gate",
        parse_params("sources:tools", "sinks:tools"),
        "after an untrusted source, sinks need a confirm_reconfirmed since its last call",
        lambda sources, sinks: _since_clear(
            disj(c(s) for s in sinks), sources, "confirm_reconfirmed"
        ),
        desc_template="after [{sources}], [{sinks}] requires re-confirmation",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} after {arg(a, 0)} without a confirm_reconfirmed since"
        ),
    ),
    _S(
        "confirm_after_source",
        parse_params("source:tool", "action:tool"),
        "after `source`, `action` needs a confirm_<action> since the last `source`",
        lambda source, action: _since_clear(c(action), (source,), f"confirm_{action}"),
        desc_template="after {source}, {action} requires confirmation",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} after {arg(a, 0)} without a confirm_{arg(a, 1)} since"
        ),
    ),
    _S(
        "sanitized_before_sink",
        parse_params("source:tool", "sanitizer:tool", "sink:tool"),
        "after `source`, `sink` needs a `sanitizer` call since the last `source`",
        lambda source, sanitizer, sink: _since_clear(c(sink), (source,), sanitizer),
        desc_template="after {source}, {sanitizer} must precede {sink}",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} after {arg(a, 0)} without {arg(a, 1)} since"
        ),
    ),
    _S(
        "approval_freshness",
        parse_params("approval:tool", "action:tool", "steps:int", steps_min=0),
        "every call of `action` has an `approval` within the last n steps",
        lambda approval, action, steps: when_called(action, OnceWithin(steps, c(approval))),
        desc_template="{action} requires approval {approval} within {steps} steps",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} without {arg(a, 0)} in the last {arg(a, 2)} steps"
        ),
    ),
    _S(
        "delegation_depth_limit",
        parse_params("max_depth:int", max_depth_min=0),
        "delegation chains are at most n deep",
        lambda max_depth: G(le(Atom("delegation_depth"), max_depth)),
        desc_template="delegation depth at most {max_depth}",
        evidence=lambda a, t, s, o, ot: f"delegation chain deeper than {arg(a, 0)} at step {s}",
    ),
    _S(
        "ctx_required",
        parse_params("tool:tool", "key:key", "values:values"),
        "every call of `tool` happens while context key k has one of the values",
        lambda tool, key, values: when_called(tool, disj(Atom("ctx", (key, v)) for v in values)),
        desc_template="{tool} requires context {key} in [{values}]",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} while context {arg(a, 1)} is not one of {arg(a, 2)}"
        ),
    ),
    _S(
        "ctx_matches_required",
        parse_params("tool:tool", "key:key", "pattern:regex"),
        "every call of `tool` happens while context key k matches the regex",
        lambda tool, key, pattern: when_called(tool, Atom("ctx_matches", (key, pattern))),
        desc_template="{tool} requires context {key} matching the pattern",
        evidence=lambda a, t, s, o, ot: (
            f"{t} called at step {s} while context {arg(a, 1)} does not match the pattern"
        ),
    ),
    _S(
        "claim_requires_evidence",
        parse_params("pred:key"),
        "every claim of predicate `pred` has the evidence verdict PASS",
        lambda pred: _claim_obligation(pred),
        desc_template="claims of {pred} must verify against evidence (PASS)",
        evidence=lambda a, t, s, o, ot: (
            f"claim of {arg(a, 0)} at step {s} did not verify against evidence (verdict not PASS)"
        ),
    ),
    _S(
        "underdetermined_must_clarify",
        parse_params("pred:key"),
        "an UNDERDETERMINED evidence verdict of `pred` has the policy action clarify",
        lambda pred: _clarify_obligation(pred),
        desc_template="underdetermined {pred} evidence must trigger clarification",
        evidence=lambda a, t, s, o, ot: (
            f"underdetermined evidence of {arg(a, 0)} at step {s} was not sent to clarification"
        ),
    ),
    *(_judge(n) for n in JUDGE_NAMES),
)
