"""The §6 patterns: one row each (arguments, formula, liveness, descriptions, evidence).

Each evidence sentence says what happened at the blamed step ("transfer
called at step 4 before any call of verify"), from the contract's
arguments and the offending event's tool name and step only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sponsio_audit.ltl.ast import (
    And,
    Atom,
    Eventually,
    EventuallyWithin,
    Formula,
    Implies,
    Not,
    Once,
    OnceWithin,
    Yesterday,
)
from sponsio_audit.ltl.patterns.formulas import G, c, conj, disj, le, when_called
from sponsio_audit.ltl.patterns.params import parse_params
from sponsio_audit.ltl.patterns.spec import Factory, PatternSpec, arg


def _mutex(a: str, b: str) -> Formula:
    # one G over both directions: the same language as the two-G form of §6, but a
    # G(past) shape, so every offending call is listed (§4.1)
    return G(And(Implies(c(b), Not(Once(c(a)))), Implies(c(a), Not(Once(c(b))))))


def _cooldown(action: str, steps: int) -> Formula:
    return when_called(action, Not(Yesterday(OnceWithin(steps - 1, c(action)))))


PII_REGEXES: tuple[tuple[str, str], ...] = (
    ("ssn", r"\b\d{3}-\d{2}-\d{4}\b"),
    ("card", r"\b(?:\d[ -]?){13,16}\b"),
    ("email", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"),
    ("phone", r"(?:\+?1[ .-]?)?\(?\b\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}\b"),
)

INJECTION_MARKERS: tuple[str, ...] = (
    r"(?i)ignore (all )?(the )?(previous|prior|above) instructions",
    r"(?i)disregard (all )?(the )?(previous|prior|above) (instructions|prompts?)",
    r"(?i)you are now (DAN|in developer mode)",
    r"(?i)reveal (your|the) system prompt",
    r"(?i)<\|im_start\|>system",
)


def _alternation(regexes: Sequence[str]) -> str:
    return regexes[0] if len(regexes) == 1 else "|".join(f"(?:{r})" for r in regexes)


def _S(name: str, params: str, description: str, factory: Factory, desc: str = "",
       **kw: Any) -> PatternSpec:  # fmt: skip
    """A spec from a compact row: ``params`` is ``"name:kind name:kind"``; ``desc`` the
    default contract description with ``{param}`` placeholders."""
    defaults = kw.pop("defaults", {})
    return PatternSpec(name, parse_params(*params.split(), **defaults), description, factory,
                       desc_template=desc, **kw)  # fmt: skip


def _count(atom: str, tool: str) -> Atom:
    return Atom(atom, (tool,))


# fmt: off
CORE: tuple[PatternSpec, ...] = (
    _S("must_precede", "before:tool after:tool",
       "every call of `after` has an earlier call of `before`",
       lambda before, after: when_called(after, Once(c(before))),
       "{before} must precede {after}",
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} before any call of {arg(a, 0)}"
       )),
    _S("must_confirm", "action:tool confirm:tool",
       "every call of `action` has an earlier confirmation call (default confirm_<action>)",
       lambda action, confirm: when_called(action, Once(c(confirm or f"confirm_{action}"))),
       "{action} requires confirmation", defaults={"confirm": None},
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} without a prior {arg(a, 1, 'confirm_' + arg(a, 0))}"
       )),
    _S("always_followed_by", "trigger:tool response:tool",
       "every call of `trigger` is eventually followed by a call of `response`",
       lambda trigger, response: when_called(trigger, Eventually(c(response))),
       "{trigger} must always be followed by {response}", liveness=True,
       evidence=lambda a, t, s, o, ot: (
           f"{ot} called at step {o} and never followed by {arg(a, 1)}"
       )),
    _S("no_reversal", "commitment:tool contradiction:tool",
       "`contradiction` is never called after `commitment`",
       lambda commitment, contradiction: when_called(contradiction, Not(Once(c(commitment)))),
       "{contradiction} must never occur after {commitment}",
       evidence=lambda a, t, s, o, ot: f"{t} called at step {s} after {arg(a, 0)}"),
    _S("rate_limit", "action:tool max_count:int", "`action` is called at most n times",
       lambda action, max_count: when_called(action, le(_count("count", action), max_count)),
       "{action} limited to {max_count} calls", defaults={"max_count_min": 0},
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s}: more than {arg(a, 1)} calls of {arg(a, 0)}"
       )),
    _S("idempotent", "action:tool", "`action` is called at most once (rate_limit(action, 1))",
       lambda action: when_called(action, le(_count("count", action), 1)),
       "{action} may be called at most once",
       evidence=lambda a, t, s, o, ot: f"{t} called again at step {s} (at most once)"),
    _S("bounded_retry", "action:tool max_retries:int",
       "at most n retries: no more than n + 1 calls of `action` in a row",
       lambda action, max_retries: when_called(
           action, le(_count("consecutive_count", action), max_retries + 1)),
       "{action} retried at most {max_retries} times", defaults={"max_retries_min": 0},
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s}: more than {arg(a, 1)} retries in a row"
       )),
    _S("cooldown", "action:tool steps:int", "no two calls of `action` within n steps",
       _cooldown, "{action} has a cooldown of {steps} steps", defaults={"steps_min": 1},
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} within {arg(a, 1)} steps of the previous call"
       )),
    _S("deadline", "trigger:tool action:tool steps:int",
       "every call of `trigger` is followed by `action` within the next n steps",
       lambda trigger, action, steps: when_called(trigger, EventuallyWithin(1, steps, c(action))),
       "{action} must occur within {steps} steps of {trigger}", liveness=True,
       defaults={"steps_min": 1},
       evidence=lambda a, t, s, o, ot: (
           f"{arg(a, 0)} was not followed by {arg(a, 1)} within {arg(a, 2)} steps "
           f"(checked at step {s})"
       )),
    _S("workflow_step", "trigger:tool next_action:tool",
       "the step right after a call of `trigger` is a call of `next_action`",
       lambda trigger, next_action: G(Implies(Yesterday(c(trigger)), c(next_action))),
       "{next_action} must be the very next step after {trigger}",
       evidence=lambda a, t, s, o, ot: (
           f"step {s} ({t}) is not {arg(a, 1)}, which must directly follow {arg(a, 0)}"
       )),
    _S("mutual_exclusion", "a:tool b:tool", "`a` and `b` are never both called in one trace",
       _mutex, "{a} and {b} are mutually exclusive",
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} although {arg(a, 0)} and {arg(a, 1)} must not both be called"
       )),
    _S("segregation_of_duty", "a:tool b:tool",
       "no agent calls both `a` and `b` (mutual exclusion per agent)",
       _mutex, "{a} and {b} must be performed by different agents", per_agent=True,
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} by an agent that also called the other of "
           f"{arg(a, 0)} / {arg(a, 1)}"
       )),
    _S("tool_allowlist", "allowed_tools:tools", "every tool call is one of the listed tools",
       lambda allowed_tools: G(Implies(Atom("called_any"), disj(c(t) for t in allowed_tools))),
       "only [{allowed_tools}] may be called",
       evidence=lambda a, t, s, o, ot: f"{t} called at step {s} is not on the allowlist"),
    _S("redirect_to_safe", "unsafe:tool safe:tool message:text",
       "`unsafe` is never called; a guard redirects it to `safe`",
       lambda unsafe, safe, message: G(Not(c(unsafe))),
       "redirect {unsafe} -> {safe}", strategy="redirect", defaults={"message": ""},
       evidence=lambda a, t, s, o, ot: f"{t} called at step {s}; use {arg(a, 1)} instead"),
    _S("requires_permission", "tool:tool permission:perm",
       "`tool` is called only by an agent with permission P",
       lambda tool, permission: when_called(tool, Atom("perm", (permission,))),
       "{tool} requires permission {permission}",
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} without permission {arg(a, 1)}"
       )),
    _S("no_data_leak", "source:agent external:agent",
       "data written by `source` never reaches `external`",
       lambda source, external: G(Not(Atom("flow", (source, external)))),
       "no data leak from {source} to {external}",
       evidence=lambda a, t, s, o, ot: f"data of {arg(a, 0)} reached {arg(a, 1)} at step {s}"),
    _S("arg_blacklist", "tool:tool param:field patterns:regexes",
       "no call of `tool` has field `param` matching any of the regexes",
       lambda tool, param, patterns: when_called(
           tool, conj(Not(Atom("arg_field_has", (tool, param, r))) for r in patterns)),
       "{tool}.{param} must not match forbidden patterns",
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} with {arg(a, 1)} matching a forbidden pattern"
       )),
    _S("arg_allowlist", "tool:tool param:field patterns:regexes",
       "every call of `tool` has field `param` matching one of the regexes",
       lambda tool, param, patterns: when_called(
           tool, disj(Atom("arg_field_has", (tool, param, r)) for r in patterns)),
       "{tool}.{param} must match an allowed pattern",
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} with {arg(a, 1)} matching no allowed pattern"
       )),
    _S("scope_limit", "tool:tool allowed_paths:paths",
       "every path in a call of `tool` lies under one of the prefixes",
       lambda tool, allowed_paths: when_called(
           tool, Atom("arg_paths_within", (tool, *allowed_paths))),
       "{tool} restricted to paths: {allowed_paths}",
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s} with a path outside {arg(a, 1)}"
       )),
    _S("loop_detection", "action:tool max_consecutive:int",
       "no more than n calls of `action` in a row",
       lambda action, max_consecutive: when_called(
           action, le(_count("consecutive_count", action), max_consecutive)),
       "{action} called at most {max_consecutive} times in a row",
       defaults={"max_consecutive_min": 1},
       evidence=lambda a, t, s, o, ot: (
           f"{t} called at step {s}: more than {arg(a, 1)} calls in a row"
       )),
    _S("required_steps", "trigger:tool steps:tools",
       "every call of `trigger` is eventually followed by each of the steps",
       lambda trigger, steps: when_called(trigger, conj(Eventually(c(s)) for s in steps)),
       "every {trigger} must be followed by all of [{steps}]", liveness=True,
       evidence=lambda a, t, s, o, ot: (
           f"{ot} called at step {o} but a required step ({arg(a, 1)}) never followed"
       )),
    _S("token_budget", "max_tokens:int scope:kind",
       "tokens of the given kind (input, output, total) summed over the trace stay ≤ n",
       lambda max_tokens, scope: G(le(Atom("token_count", (scope,)), max_tokens)),
       "{scope} tokens must not exceed {max_tokens}",
       defaults={"max_tokens_min": 0, "scope": "total"},
       evidence=lambda a, t, s, o, ot: f"token count exceeded {arg(a, 0)} at step {s}"),
    _S("no_pii", "", "no LLM output contains an SSN, card number, email address or phone number",
       lambda: G(conj(Not(Atom("llm_output_contains", (r,))) for _, r in PII_REGEXES)),
       "LLM output free of SSNs, card numbers, emails and phone numbers",
       evidence=lambda a, t, s, o, ot: f"model output at step {s} contains PII"),
    _S("prompt_injection_marker", "patterns:regexes",
       "no LLM input matches a prompt-injection marker regex (a shipped list by default)",
       lambda patterns: G(Not(Atom("llm_input_contains", (_alternation(patterns),)))),
       "LLM input free of prompt-injection markers", defaults={"patterns": INJECTION_MARKERS},
       evidence=lambda a, t, s, o, ot: (
           f"model input at step {s} contains a prompt-injection marker"
       )),
    _S("latency_budget", "tool:tool ms:number",
       "no call of `tool` lasts longer than ms milliseconds",
       lambda tool, ms: G(Not(Atom("latency_exceeds", (tool, ms)))),
       "{tool} calls take at most {ms} ms",
       evidence=lambda a, t, s, o, ot: f"{t} at step {s} took longer than {arg(a, 1)} ms"),
)
# fmt: on
