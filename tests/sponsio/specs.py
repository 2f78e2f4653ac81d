"""Random traces and random contracts that mean the same to Sponsio and to us.

Traces are tool calls of one agent with every argument recorded (no missing
fact: that divergence has its own test). Argument values avoid the places
where the two argument texts differ by construction (Sponsio searches the
Python ``repr`` of the arguments, we search their compact JSON): regexes are
letters only, values are plain strings and integers, paths are absolute.

A ``Spec`` is one contract written twice: ours (a ``Contract``) and
Sponsio's (a factory taking its ``Agent``), built from one random choice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st

from sponsio_audit.event import Event
from sponsio_audit.ltl import ast, patterns
from sponsio_audit.ltl.contract import Clause, Contract

from .oracle import AGENT, sponsio_contract, sponsio_pattern, to_sponsio

TOOLS = ("a", "b", "c", "bash", "confirm_a", "execute_sql")
FIELDS = ("cmd", "path", "n", "query")
PERMS = ("admin", "approver")
WORDS = ("ls", "rm x", "cat y", "echo abc", "sed -i z", "python -c q", "ab", "", "rm -rf w",
         "rm -r", "chmod 7 f", "echo > /app/x", "sudo ls")  # fmt: skip
PATHS = ("/work/a", "/work/b/c", "/tmp/x", "/etc/passwd", "/work/../etc/x", "/workx/y")
QUERIES = ("select 1", "drop table t", "DELETE from x", "deleted rows", "alter t", "x")
REGEXES = ("a", "b", "c", "ab", "rm", "cat", "etc", "work", "x", "z", "sel")

tools = st.sampled_from(TOOLS)
regexes = st.sampled_from(REGEXES)


def _args() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "cmd": st.one_of(st.sampled_from(WORDS), st.sampled_from(PATHS).map("cat {}".format)),
            "path": st.sampled_from(PATHS),
            "n": st.integers(-3, 12),
            "query": st.sampled_from(QUERIES),
        }
    )


def _call() -> st.SearchStrategy[Event]:
    return st.builds(
        lambda tool, args: Event(type="tool_call", tool=tool, args=args, agent=AGENT),
        tools,
        _args(),
    )


traces = st.lists(_call(), min_size=1, max_size=9)


def _llm_event() -> st.SearchStrategy[Event]:
    return st.one_of(
        st.sampled_from(("plan", "go on")).map(
            lambda p: Event(type="llm_request", prompt=p, agent=AGENT)
        ),
        st.builds(
            lambda c, n: Event(type="llm_response", content=c, agent=AGENT, tokens_total=n),
            st.sampled_from(("thinking", "ok")),
            st.integers(0, 9),
        ),
    )


@st.composite
def llm_traces(draw: Any) -> list[Event]:
    """Tool calls with LLM turns between them, runs of one repeated call included (an
    agent retrying, thinking between the tries): a tool contract's view is the calls."""
    out: list[Event] = []
    for _ in range(draw(st.integers(1, 4))):
        step = draw(_call())
        for _ in range(draw(st.integers(1, 3))):
            out += draw(st.lists(_llm_event(), max_size=2))
            out.append(step)
    return out


POSITIONAL = ("cooldown",)
"""Patterns whose meaning counts positions: with LLM events between the calls they
differ from Sponsio's (test_divergences), so their traces are tool calls only."""


@dataclass(frozen=True)
class Spec:
    """One contract for both sides: ours, and Sponsio's from its ``Agent``."""

    ours: Contract
    theirs: Callable[[Any], Any]
    family: str


# ------------------------------------------------------------------ patterns


def _two(draw: Any) -> tuple[str, str]:
    a = draw(tools)
    b = draw(tools.filter(lambda t: t != a))
    return a, b


def _prefixes(choices: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(choices), min_size=1, max_size=2, unique=True)


@st.composite
def pattern_calls(draw: Any, name: str | None = None) -> tuple[str, list[Any]]:
    """(pattern name, positional args) accepted by both pattern libraries."""
    name = name or draw(st.sampled_from(PATTERN_NAMES))
    a, b = _two(draw)
    n = draw(st.integers(0, 3))
    match name:
        case ("must_precede" | "always_followed_by" | "no_reversal" | "mutual_exclusion"
              | "never_together" | "segregation_of_duty" | "audit_after" | "redirect_to_safe"
              | "dry_run_before_commit" | "backup_before_destructive"):  # fmt: skip
            return name, [a, b]
        case "must_confirm" | "idempotent" | "irreversible_once":
            return name, [a]
        case "rate_limit" | "loop_detection" | "cooldown":
            return name, [a, max(n, 1) if name != "rate_limit" else n]
        case "tool_allowlist":
            return name, [sorted(set(draw(st.lists(tools, min_size=1, max_size=3))))]
        case "requires_permission" | "destructive_action_gate":
            return name, [a, draw(st.sampled_from(PERMS))]
        case "required_steps_completion":
            c = draw(tools.filter(lambda t: t not in (a, b)))
            return name, [a, [b, c]]
        case "approval_freshness":
            return name, [a, b, max(n, 1)]
        case "sanitized_before_sink":
            c = draw(tools.filter(lambda t: t not in (a, b)))
            return name, [a, b, c]
        case "duplicate_call_limit":
            return name, [a, draw(regexes), n]
        case "arg_blacklist" | "arg_allowlist":
            rx = draw(st.lists(regexes, min_size=1, max_size=2, unique=True))
            return name, [a, draw(st.sampled_from(FIELDS)), rx]
        case "scope_limit":
            return name, [a, draw(_prefixes(("/work", "/tmp", "/etc")))]
        case "data_intact":
            return name, [draw(regexes), draw(_prefixes(("/work", "/tmp")))]
        case "arg_length_limit":
            return name, [a, draw(st.sampled_from(FIELDS)), draw(st.integers(0, 12))]
        case "arg_value_range":
            # the range holds 0: Sponsio also checks it at other events, where the value is 0
            return name, [a, "n", draw(st.integers(-3, 0)), draw(st.integers(0, 10))]
        case "dangerous_sql_verbs" if draw(st.booleans()):
            return name, [a]  # the shipped verbs (Sponsio's)
        case "dangerous_sql_verbs":
            verbs = draw(st.lists(st.sampled_from(("DROP", "DELETE", "ALTER", "SELECT")),
                                  min_size=1, max_size=3, unique=True))  # fmt: skip
            return name, [a, verbs]
        case "dangerous_bash_commands":
            if draw(st.booleans()):
                return name, []  # the shipped list (Sponsio's)
            return name, [draw(st.lists(st.sampled_from(("rm x", "sed -i", "python -c", "cat")),
                                        min_size=1, max_size=3, unique=True))]  # fmt: skip
    raise AssertionError(name)


PATTERN_NAMES = (
    "must_precede", "always_followed_by", "no_reversal", "mutual_exclusion", "never_together",
    "segregation_of_duty", "audit_after", "redirect_to_safe", "dry_run_before_commit",
    "backup_before_destructive", "must_confirm", "idempotent", "irreversible_once",
    "rate_limit", "loop_detection", "cooldown", "tool_allowlist", "requires_permission",
    "destructive_action_gate", "required_steps_completion",
    "sanitized_before_sink", "duplicate_call_limit", "arg_blacklist", "arg_allowlist",
    "scope_limit", "data_intact", "arg_length_limit", "arg_value_range", "dangerous_sql_verbs",
    "dangerous_bash_commands",
)  # fmt: skip
"""Every pattern both libraries have with the same meaning on these traces (the
ones that differ, deadline, bounded_retry and approval_freshness, are in test_divergences)."""


def pattern_spec(cid: str, name: str, args: list[Any]) -> Spec:
    r = patterns.build(name, args)
    ours = Contract(cid, "*", (r.clause(),), per_agent=r.per_agent)
    return Spec(ours, lambda agent: sponsio_contract(agent, [sponsio_pattern(name, args)]), name)


# ------------------------------------------------------------------ A/G formulas


def _bool_atoms() -> st.SearchStrategy[ast.Formula]:
    return st.one_of(
        tools.map(lambda t: ast.Atom("called", (t,))),
        st.tuples(tools, regexes).map(lambda x: ast.Atom("arg_has", x)),
        st.tuples(tools, st.sampled_from(FIELDS), regexes).map(
            lambda x: ast.Atom("arg_field_has", x)
        ),
        st.just(ast.Atom("called_any")),
    )


def _leaves() -> st.SearchStrategy[ast.Formula]:
    cmp = st.builds(
        ast.Cmp,
        st.sampled_from(("<=", "<", ">=", ">", "==")),
        tools.map(lambda t: ast.Atom("count", (t,))),
        st.integers(0, 3).map(ast.Num),
    )
    return st.one_of(_bool_atoms(), _bool_atoms(), cmp)


def _shaped(leaf: st.SearchStrategy[ast.Formula]) -> st.SearchStrategy[ast.Formula]:
    """The shapes real contracts have (safety, response, precedence, …)."""
    a, b = leaf, leaf
    return st.one_of(
        st.builds(ast.Always, a),
        st.builds(lambda x: ast.Always(ast.Not(x)), a),
        st.builds(lambda x, y: ast.Always(ast.Implies(x, y)), a, b),
        st.builds(lambda x, y: ast.Always(ast.Implies(x, ast.Next(y))), a, b),
        st.builds(lambda x, y: ast.Always(ast.Implies(x, ast.Eventually(y))), a, b),
        st.builds(lambda x, y: ast.Always(ast.Implies(x, ast.Always(ast.Not(y)))), a, b),
        st.builds(lambda x, y: ast.Or(ast.Until(ast.Not(x), y), ast.Always(ast.Not(x))), a, b),
        st.builds(ast.Eventually, a),
    )


_random = st.recursive(
    _leaves(),
    lambda sub: st.one_of(
        st.builds(ast.Not, sub),
        st.builds(ast.Always, sub),
        st.builds(ast.Eventually, sub),
        st.builds(ast.Next, sub),
        st.builds(ast.And, sub, sub),
        st.builds(ast.Or, sub, sub),
        st.builds(ast.Implies, sub, sub),
        st.builds(ast.Until, sub, sub),
    ),
    max_leaves=6,
)
formulas = st.one_of(_shaped(_leaves()), _shaped(_leaves()), _random)
triggers = st.one_of(_bool_atoms(), _bool_atoms().map(ast.Eventually))
"""first_match assumptions: an atom or ``F atom`` (the shapes Sponsio accepts there)."""


@st.composite
def ag_specs(draw: Any, cid: str) -> Spec:
    first_match = draw(st.booleans())
    if first_match:
        assumptions = draw(st.lists(triggers, min_size=1, max_size=2))
    else:
        assumptions = draw(st.lists(formulas, max_size=2))
    guarantees = draw(st.lists(formulas, min_size=1, max_size=2))
    ours = Contract(
        cid,
        "*",
        tuple(Clause(g) for g in guarantees),
        tuple(Clause(a) for a in assumptions),
        activate_at="first_match" if first_match else "global",
    )
    g_s, a_s = [to_sponsio(g) for g in guarantees], [to_sponsio(a) for a in assumptions]
    family = "ag_first_match" if first_match else "ag_global"
    return Spec(ours, lambda agent: sponsio_contract(agent, g_s, a_s, first_match), family)


@st.composite
def specs(draw: Any, n: int) -> list[Spec]:
    """``n`` contracts: patterns and A/G contracts in both activation modes."""
    out = []
    for i in range(n):
        if draw(st.booleans()):
            name, args = draw(pattern_calls())
            out.append(pattern_spec(f"c{i}", name, args))
        else:
            out.append(draw(ag_specs(f"c{i}")))
    return out


# ------------------------------------------------------------------ value terms and evidence
# Traces with context updates and Sponsio evidence events, and contracts over
# ArgValue/CtxValue and the evidence patterns. Kept clear of the documented
# divergences: every trace sets every context key first (an unset key is unknown
# here, None in Sponsio), context values are strings (Sponsio stringifies them),
# ordered comparisons read the integer field only (Sponsio coerces numeric-looking
# strings, here a string has no order with a number), every evidence event records
# its verdict and action (a missing one is unknown here).

CTX_KEYS = ("pm", "owner")
VALUES = ("pm_1", "pm_2", "alice", "5")
PREDS = ("p1", "p2")
VERDICTS = ("PASS", "MISMATCH", "UNDERDETERMINED", "pass", "STALE")
ACTIONS = ("release", "clarify", "block", "CLARIFY")


def _value_call() -> st.SearchStrategy[Event]:
    args = st.fixed_dictionaries(
        {"m": st.one_of(st.sampled_from(VALUES), st.integers(4, 6)), "n": st.integers(-3, 6)}
    )
    return st.builds(
        lambda tool, a: Event(type="tool_call", tool=tool, args=a, agent=AGENT),
        st.sampled_from(("a", "b")),
        args,
    )


def _ctx_update() -> st.SearchStrategy[Event]:
    return st.builds(
        lambda k, v: Event(type="context_update", args={k: v}, agent=AGENT),
        st.sampled_from(CTX_KEYS),
        st.sampled_from(VALUES),
    )


def _evidence() -> st.SearchStrategy[Event]:
    return st.builds(
        lambda p, v, a: Event(
            type="evidence", tool=p, args={"verdict": v, "action": a}, agent=AGENT
        ),
        st.sampled_from(PREDS),
        st.sampled_from(VERDICTS),
        st.sampled_from(ACTIONS),
    )


_FIRST = Event(type="context_update", args={k: "pm_1" for k in CTX_KEYS}, agent=AGENT)
value_traces = st.lists(
    st.one_of(_value_call(), _value_call(), _ctx_update(), _evidence()), min_size=1, max_size=9
).map(lambda t: [_FIRST, *t])


def _value_terms(t: str) -> st.SearchStrategy[ast.Term]:
    return st.one_of(
        st.just(ast.Atom("arg_value", (t, "m"))),
        st.sampled_from(CTX_KEYS).map(lambda k: ast.Atom("ctx_value", (k,))),
        st.sampled_from(VALUES).map(ast.Str),
        st.integers(4, 6).map(ast.Num),
    )


def _value_leaf(t: str) -> st.SearchStrategy[ast.Formula]:
    """A comparison read at calls of t (ArgValue of another tool is None there in Sponsio
    and this tool's last value here: a divergence with its own test)."""
    eq = st.builds(lambda x, y: ast.Cmp("==", x, y), _value_terms(t), _value_terms(t))
    order = st.builds(
        ast.Cmp,
        st.sampled_from(("<=", "<", ">=", ">")),
        st.just(ast.Atom("arg_value", (t, "n"))),
        st.integers(-2, 4).map(ast.Num),
    )
    return st.one_of(eq, eq.map(ast.Not), order)


@st.composite
def value_specs(draw: Any, cid: str) -> Spec:
    """``G(called(t) → value comparison)`` and the evidence patterns."""
    if draw(st.booleans()):
        name = draw(st.sampled_from(("claim_requires_evidence", "underdetermined_must_clarify")))
        spec = pattern_spec(cid, name, [draw(st.sampled_from(PREDS))])
        return replace(spec, family=name)
    t = draw(st.sampled_from(("a", "b")))
    f = ast.Always(ast.Implies(ast.Atom("called", (t,)), draw(_value_leaf(t))))
    ours = Contract(cid, "*", (Clause(f),))
    theirs = to_sponsio(f)
    return Spec(ours, lambda agent: sponsio_contract(agent, [theirs]), "value_terms")
