"""The pattern library (SEMANTICS.md §6): one registry of named, typed formula factories.

A ``PatternSpec`` says what a pattern is called, its typed parameters, a
one-line description, whether it is a liveness property and its default
strategy. ``build(name, args)`` binds YAML-style arguments (a list, a
mapping by parameter name, or a single scalar), checks their types,
compiles every regex with RE2 and returns a ``PatternResult`` that becomes
a ``Clause``. The §6.1 names used by existing Sponsio files live in
``sponsio_names`` and join this registry; ``sponsio-audit patterns`` and
the YAML resolver both read ``registry()``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from sponsio_audit.ltl.ast import (
    FALSE,
    TRUE,
    Always,
    And,
    Atom,
    Cmp,
    Eventually,
    EventuallyWithin,
    Formula,
    Implies,
    Not,
    Num,
    Once,
    OnceWithin,
    Or,
    Yesterday,
)
from sponsio_audit.ltl.contract import Clause, Strategy
from sponsio_audit.regexes import RegexError, compile_regex

LOOKAROUND_SKIP = "regex uses lookaround, which RE2 cannot run"
JUDGE_SKIP = "needs an LLM judge"

# ---------------------------------------------------------------- parameters

_REQUIRED: Any = object()

# list kinds and the kind of their elements
LIST_KINDS = {"tools": "tool", "regexes": "regex", "paths": "path", "values": "value"}
TOKEN_KINDS = {"input": "input", "output": "output", "total": "total"}
TOKEN_KINDS |= {"input_tokens": "input", "output_tokens": "output", "total_tokens": "total"}


@dataclass(frozen=True)
class Param:
    """A typed parameter: tool, tools, field, regex, regexes, int, number, path, paths,
    perm, kind (token kind), key, value, values, agent or text."""

    name: str
    kind: str
    default: Any = _REQUIRED
    minimum: int | None = None

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    @property
    def is_list(self) -> bool:
        return self.kind in LIST_KINDS

    def show(self) -> str:
        """``name: kind`` with ``…`` for lists and ``=default`` when optional."""
        s = f"{self.name}: {self.kind}{'…' if self.is_list else ''}"
        if not self.required:
            d = self.default
            shown = "[…]" if isinstance(d, tuple) and len(d) > 2 else repr(d)
            s += f" = {shown}"
        return s


class PatternArgError(ValueError):
    """A bad argument; ``where`` is its position inside ``args`` (indices and names)."""

    def __init__(self, message: str, where: tuple[int | str, ...] = ()) -> None:
        self.message = message
        self.where = where
        super().__init__(message)


def _p(*spec: str, **defaults: Any) -> tuple[Param, ...]:
    """Parameters from ``"name:kind"`` strings; ``name=value`` keywords give defaults,
    ``name_min=k`` a minimum for an int."""
    out = []
    for s in spec:
        name, kind = s.split(":")
        out.append(Param(name, kind, defaults.get(name, _REQUIRED), defaults.get(f"{name}_min")))
    return tuple(out)


def _scalar(p: Param, kind: str, v: Any, where: tuple[int | str, ...], skips: list[str]) -> Any:
    if kind == "int":
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise PatternArgError(f"{p.name}: expected a whole number, got {v!r}", where)
        if p.minimum is not None and v < p.minimum:
            raise PatternArgError(f"{p.name}: expected a number ≥ {p.minimum}, got {v}", where)
        return v
    if kind == "number":
        if isinstance(v, str):
            with contextlib.suppress(ValueError):
                v = float(v) if any(ch in v for ch in ".eE") else int(v)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise PatternArgError(f"{p.name}: expected a number, got {v!r}", where)
        return v
    if kind == "value":
        if isinstance(v, bool):
            return "true" if v else "false"
        if not isinstance(v, (str, int, float)):
            raise PatternArgError(f"{p.name}: expected a string or number, got {v!r}", where)
        return v
    if isinstance(v, int) and not isinstance(v, bool) and kind in ("field", "key", "perm"):
        v = str(v)
    if not isinstance(v, str) or (kind != "text" and not v.strip()):
        what = {"tool": "a tool name", "regex": "a regex", "path": "a path prefix"}
        expected = what.get(kind, f"a {kind} (a non-empty string)")
        raise PatternArgError(f"{p.name}: expected {expected}, got {v!r}", where)
    if kind == "regex":
        try:
            compile_regex(v)
        except RegexError as e:
            if not e.lookaround:
                raise PatternArgError(f"{p.name}: {e}", where) from None
            skips.append(LOOKAROUND_SKIP)
    if kind == "kind":
        if v not in TOKEN_KINDS:
            raise PatternArgError(
                f"{p.name}: expected one of input, output, total; got {v!r}", where
            )
        return TOKEN_KINDS[v]
    return v


def _coerce(p: Param, v: Any, where: tuple[int | str, ...], skips: list[str]) -> Any:
    if not p.is_list:
        if isinstance(v, (list, tuple, dict)):
            raise PatternArgError(f"{p.name}: expected a single {p.kind}, got a list", where)
        return _scalar(p, p.kind, v, where, skips)
    items = [v] if not isinstance(v, (list, tuple)) else list(v)
    if not items:
        raise PatternArgError(f"{p.name}: expected at least one {LIST_KINDS[p.kind]}", where)
    elem = LIST_KINDS[p.kind]
    single = not isinstance(v, (list, tuple))
    return tuple(
        _scalar(p, elem, x, where if single else (*where, j), skips) for j, x in enumerate(items)
    )


def bind(params: Sequence[Param], args: Any) -> tuple[dict[str, Any], list[str]]:
    """Bind YAML ``args`` to ``params``: positional list, mapping by name, or one scalar.

    A list parameter in last place also takes the remaining positional arguments
    (``[tool, field, re1, re2]`` as well as ``[tool, field, [re1, re2]]``).
    Returns the bound values and the skip reasons met (regex lookaround).
    """
    skips: list[str] = []
    given: dict[str, tuple[Any, tuple[int | str, ...]]] = {}
    sig = ", ".join(p.show() for p in params)
    if args is None:
        args = []
    if isinstance(args, Mapping):
        names = {p.name for p in params}
        for k, v in args.items():
            if k not in names:
                raise PatternArgError(f"unknown argument {k!r}; expected ({sig})", (str(k),))
            given[str(k)] = (v, (str(k),))
    else:
        seq = list(args) if isinstance(args, (list, tuple)) else [args]
        n = len(params)
        if len(seq) > n and n and params[-1].is_list:
            if any(isinstance(x, (list, tuple)) for x in seq[n - 1 :]):
                raise PatternArgError(f"too many arguments; expected ({sig})")
            tail = seq[n - 1 :]
            seq = [*seq[: n - 1], tail]
        elif len(seq) > n:
            raise PatternArgError(f"expected at most {n} argument(s) ({sig}), got {len(seq)}")
        for i, (p, v) in enumerate(zip(params, seq, strict=False)):
            given[p.name] = (v, (i,))
    out: dict[str, Any] = {}
    for p in params:
        if p.name in given and not (given[p.name][0] is None and p.default is None):
            v, where = given[p.name]
            out[p.name] = _coerce(p, v, where, skips)
        elif p.required:
            raise PatternArgError(f"missing argument {p.name!r}; expected ({sig})")
        else:
            out[p.name] = p.default
    return out, skips


# ---------------------------------------------------------------- specs


@dataclass(frozen=True)
class PatternResult:
    """A built pattern: its formula plus what a ``Clause`` and a YAML round trip need."""

    pattern: str
    formula: Formula
    args: tuple[Any, ...]
    desc: str
    liveness: bool = False
    strategy: Strategy | None = None
    per_agent: bool = False
    skipped: str | None = None

    def clause(self, desc: str | None = None, source: str | None = None) -> Clause:
        """This result as a guarantee or assumption clause."""
        return Clause(
            self.formula,
            desc=desc or self.desc,
            source=source,
            pattern=self.pattern,
            args=self.args,
            liveness=self.liveness,
            skipped=self.skipped,
        )

    def yaml_args(self) -> list[Any]:
        """The arguments as a YAML list (tuples as lists), for writing the pattern back."""
        out = [list(a) if isinstance(a, tuple) else a for a in self.args]
        while out and out[-1] is None:
            out.pop()
        return out


Factory = Callable[..., Formula]


@dataclass(frozen=True)
class PatternSpec:
    """A registered pattern. ``factory`` takes the bound arguments by name and returns
    the formula; ``build`` does binding, checks and metadata."""

    name: str
    params: tuple[Param, ...]
    description: str
    factory: Factory
    liveness: bool = False
    strategy: str = "block"
    desc_template: str = ""
    per_agent: bool = False
    alias_of: str | None = None
    judge: bool = False

    def signature(self) -> str:
        return f"{self.name}({', '.join(p.show() for p in self.params)})"

    def build(self, args: Any = None, desc: str | None = None) -> PatternResult:
        """Bind ``args`` and build the formula; raise ``PatternArgError`` on bad arguments."""
        if self.judge:
            raw = args if isinstance(args, (list, tuple)) else ([] if args is None else [args])
            text = tuple(str(a) for a in raw)
            return PatternResult(
                self.name, Atom(self.name, text), text, desc or self.description, skipped=JUDGE_SKIP
            )
        bound, skips = bind(self.params, args)
        formula = self.factory(**bound)
        shown = {k: ", ".join(map(str, v)) if isinstance(v, tuple) else v for k, v in bound.items()}
        default_desc = (
            self.desc_template.format(**shown) if self.desc_template else self.description
        )
        strategy = None
        if self.strategy == "redirect":
            strategy = Strategy("redirect", str(bound.get("safe")))
        return PatternResult(
            self.name,
            formula,
            tuple(bound[p.name] for p in self.params),
            desc or default_desc,
            self.liveness,
            strategy,
            self.per_agent,
            skips[0] if skips else None,
        )


# ---------------------------------------------------------------- formula helpers


def c(tool: str) -> Atom:
    """``called(tool)``."""
    return Atom("called", (tool,))


def conj(fs: Iterable[Formula]) -> Formula:
    """Left-nested conjunction (``true`` when empty)."""
    out: Formula | None = None
    for f in fs:
        out = f if out is None else And(out, f)
    return TRUE if out is None else out


def disj(fs: Iterable[Formula]) -> Formula:
    """Left-nested disjunction (``false`` when empty)."""
    out: Formula | None = None
    for f in fs:
        out = f if out is None else Or(out, f)
    return FALSE if out is None else out


def le(term: Atom, n: int | float) -> Cmp:
    """``term <= n``."""
    return Cmp("<=", term, Num(n))


def G(f: Formula) -> Formula:
    return Always(f)


def when_called(tool: str, body: Formula) -> Formula:
    """``G(called(tool) → body)``: the safety shape whose offending events are listed (§4.1)."""
    return Always(Implies(c(tool), body))


# ---------------------------------------------------------------- the §6 patterns


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
    return PatternSpec(name, _p(*params.split(), **defaults), description, factory,
                       desc_template=desc, **kw)  # fmt: skip


def _count(atom: str, tool: str) -> Atom:
    return Atom(atom, (tool,))


# fmt: off
CORE: tuple[PatternSpec, ...] = (
    _S("must_precede", "before:tool after:tool",
       "every call of `after` has an earlier call of `before`",
       lambda before, after: when_called(after, Once(c(before))),
       "{before} must precede {after}"),
    _S("must_confirm", "action:tool confirm:tool",
       "every call of `action` has an earlier confirmation call (default confirm_<action>)",
       lambda action, confirm: when_called(action, Once(c(confirm or f"confirm_{action}"))),
       "{action} requires confirmation", defaults={"confirm": None}),
    _S("always_followed_by", "trigger:tool response:tool",
       "every call of `trigger` is eventually followed by a call of `response`",
       lambda trigger, response: when_called(trigger, Eventually(c(response))),
       "{trigger} must always be followed by {response}", liveness=True),
    _S("no_reversal", "commitment:tool contradiction:tool",
       "`contradiction` is never called after `commitment`",
       lambda commitment, contradiction: when_called(contradiction, Not(Once(c(commitment)))),
       "{contradiction} must never occur after {commitment}"),
    _S("rate_limit", "action:tool max_count:int", "`action` is called at most n times",
       lambda action, max_count: when_called(action, le(_count("count", action), max_count)),
       "{action} limited to {max_count} calls", defaults={"max_count_min": 0}),
    _S("idempotent", "action:tool", "`action` is called at most once (rate_limit(action, 1))",
       lambda action: when_called(action, le(_count("count", action), 1)),
       "{action} may be called at most once"),
    _S("bounded_retry", "action:tool max_retries:int",
       "at most n retries: no more than n + 1 calls of `action` in a row",
       lambda action, max_retries: when_called(
           action, le(_count("consecutive_count", action), max_retries + 1)),
       "{action} retried at most {max_retries} times", defaults={"max_retries_min": 0}),
    _S("cooldown", "action:tool steps:int", "no two calls of `action` within n steps",
       _cooldown, "{action} has a cooldown of {steps} steps", defaults={"steps_min": 1}),
    _S("deadline", "trigger:tool action:tool steps:int",
       "every call of `trigger` is followed by `action` within the next n steps",
       lambda trigger, action, steps: when_called(trigger, EventuallyWithin(1, steps, c(action))),
       "{action} must occur within {steps} steps of {trigger}", liveness=True,
       defaults={"steps_min": 1}),
    _S("workflow_step", "trigger:tool next_action:tool",
       "the step right after a call of `trigger` is a call of `next_action`",
       lambda trigger, next_action: G(Implies(Yesterday(c(trigger)), c(next_action))),
       "{next_action} must be the very next step after {trigger}"),
    _S("mutual_exclusion", "a:tool b:tool", "`a` and `b` are never both called in one trace",
       _mutex, "{a} and {b} are mutually exclusive"),
    _S("segregation_of_duty", "a:tool b:tool",
       "no agent calls both `a` and `b` (mutual exclusion per agent)",
       _mutex, "{a} and {b} must be performed by different agents", per_agent=True),
    _S("tool_allowlist", "allowed_tools:tools", "every tool call is one of the listed tools",
       lambda allowed_tools: G(Implies(Atom("called_any"), disj(c(t) for t in allowed_tools))),
       "only [{allowed_tools}] may be called"),
    _S("redirect_to_safe", "unsafe:tool safe:tool message:text",
       "`unsafe` is never called; a guard redirects it to `safe`",
       lambda unsafe, safe, message: G(Not(c(unsafe))),
       "redirect {unsafe} -> {safe}", strategy="redirect", defaults={"message": ""}),
    _S("requires_permission", "tool:tool permission:perm",
       "`tool` is called only by an agent with permission P",
       lambda tool, permission: when_called(tool, Atom("perm", (permission,))),
       "{tool} requires permission {permission}"),
    _S("no_data_leak", "source:agent external:agent",
       "data written by `source` never reaches `external`",
       lambda source, external: G(Not(Atom("flow", (source, external)))),
       "no data leak from {source} to {external}"),
    _S("arg_blacklist", "tool:tool param:field patterns:regexes",
       "no call of `tool` has field `param` matching any of the regexes",
       lambda tool, param, patterns: when_called(
           tool, conj(Not(Atom("arg_field_has", (tool, param, r))) for r in patterns)),
       "{tool}.{param} must not match forbidden patterns"),
    _S("arg_allowlist", "tool:tool param:field patterns:regexes",
       "every call of `tool` has field `param` matching one of the regexes",
       lambda tool, param, patterns: when_called(
           tool, disj(Atom("arg_field_has", (tool, param, r)) for r in patterns)),
       "{tool}.{param} must match an allowed pattern"),
    _S("scope_limit", "tool:tool allowed_paths:paths",
       "every path in a call of `tool` lies under one of the prefixes",
       lambda tool, allowed_paths: when_called(
           tool, Atom("arg_paths_within", (tool, *allowed_paths))),
       "{tool} restricted to paths: {allowed_paths}"),
    _S("loop_detection", "action:tool max_consecutive:int",
       "no more than n calls of `action` in a row",
       lambda action, max_consecutive: when_called(
           action, le(_count("consecutive_count", action), max_consecutive)),
       "{action} called at most {max_consecutive} times in a row",
       defaults={"max_consecutive_min": 1}),
    _S("required_steps", "trigger:tool steps:tools",
       "every call of `trigger` is eventually followed by each of the steps",
       lambda trigger, steps: when_called(trigger, conj(Eventually(c(s)) for s in steps)),
       "every {trigger} must be followed by all of [{steps}]", liveness=True),
    _S("token_budget", "max_tokens:int scope:kind",
       "tokens of the given kind (input, output, total) summed over the trace stay ≤ n",
       lambda max_tokens, scope: G(le(Atom("token_count", (scope,)), max_tokens)),
       "{scope} tokens must not exceed {max_tokens}",
       defaults={"max_tokens_min": 0, "scope": "total"}),
    _S("no_pii", "", "no LLM output contains an SSN, card number, email address or phone number",
       lambda: G(conj(Not(Atom("llm_output_contains", (r,))) for _, r in PII_REGEXES)),
       "LLM output free of SSNs, card numbers, emails and phone numbers"),
    _S("prompt_injection_marker", "patterns:regexes",
       "no LLM input matches a prompt-injection marker regex (a shipped list by default)",
       lambda patterns: G(Not(Atom("llm_input_contains", (_alternation(patterns),)))),
       "LLM input free of prompt-injection markers", defaults={"patterns": INJECTION_MARKERS}),
    _S("latency_budget", "tool:tool ms:number",
       "no call of `tool` lasts longer than ms milliseconds",
       lambda tool, ms: G(Not(Atom("latency_exceeds", (tool, ms)))),
       "{tool} calls take at most {ms} ms"),
)
# fmt: on


@functools.cache
def registry() -> Mapping[str, PatternSpec]:
    """Every pattern name (§6 and the §6.1 Sponsio names), read-only."""
    from sponsio_audit.ltl import sponsio_names  # imports this module: resolved lazily

    table = {s.name: s for s in (*CORE, *sponsio_names.SPECS)}
    return MappingProxyType(table)


def lookup(name: str) -> PatternSpec | None:
    """The pattern registered under ``name``, or None."""
    return registry().get(name)


def build(name: str, args: Any = None, desc: str | None = None) -> PatternResult:
    """Build pattern ``name`` from YAML-style ``args``; KeyError when the name is unknown."""
    spec = lookup(name)
    if spec is None:
        raise KeyError(name)
    return spec.build(args, desc)
