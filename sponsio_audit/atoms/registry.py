"""The one table of atoms (SEMANTICS.md §5).

Each entry says what an atom is called, its parameters, its value type,
which event types it is grounded from, when it is unknown, and whether it
carries state across events. The config loader resolves ``ltl:`` atoms
against it, ``sponsio-audit atoms`` lists it, and the three groundings
(online, columnar, the guard's) implement exactly these entries: each keeps
one ``Rules`` table of one function per atom name, checked against this
table when its module is imported (an atom without a rule fails the import).
An alias (``llm_said``) and an atom defined as another (``called_with`` is
``arg_has``: ``same_as``) resolve to the one rule through ``grounding_name``.

Values at positions whose event is not of an atom's source type
(SEMANTICS.md §5): a bool *event* atom is false; an int/number atom keeps
its last value (0 before the first); a *state* atom (``stateful=True``)
has its running value at every position, computed from the whole
(agent-filtered) trace up to and including that position, except a *run*
atom (``run=True``: ``consecutive_count``), which counts consecutive
positions of the contract's view, so the groundings take the view's event
types (``atoms.view``) and an event outside the view neither extends nor ends it.

A *value* atom (value "any": ``arg_value``, ``ctx_value``) is a JSON value
(string, number, bool, or a list/object/null compared by its canonical JSON)
and is only ever compared. Like ``arg_length`` it keeps its last value at
positions that are not calls of t (other tools' calls too); before the first
call of t there is no value: unknown, never 0 (Sponsio's None, which makes
its comparison false, is unknown here). Comparisons: ``ltl.reference.compare``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

TOOL = "tool_call"
LLM_REQ = "llm_request"
LLM_RESP = "llm_response"
EVIDENCE = "evidence"


@dataclass(frozen=True)
class Param:
    """One parameter of an atom: ``kind`` is tool, regex, field, value, path,
    number, perm, key, agent, kind or pred (an evidence predicate)."""

    name: str
    kind: str


@dataclass(frozen=True)
class AtomSpec:
    """A registered atom."""

    name: str
    params: tuple[Param, ...]
    value: str  # "bool", "int", "number" or "any" (a JSON value: compare it with == / !=)
    sources: frozenset[str]
    unknown: str
    description: str
    variadic: bool = False  # the last parameter repeats (one or more)
    stateful: bool = False
    run: bool = False  # counts consecutive positions: grounded over the view's positions (§1)
    aliases: tuple[str, ...] = ()
    same_as: str | None = None  # grounded by another atom's rule (same values everywhere)

    @property
    def min_args(self) -> int:
        return len(self.params)

    @property
    def keeps_value(self) -> bool:
        """True when the value at an event outside the atom's events is carried over
        (state atoms, and int/number atoms keep their last value)."""
        return self.stateful or self.value != "bool"

    @property
    def may_be_unknown(self) -> bool:
        """True when some recorded event can leave the atom unknown."""
        return self.unknown != "never"

    def accepts(self, nargs: int) -> bool:
        """True when ``nargs`` arguments fit this atom's parameters."""
        if self.variadic:
            return nargs >= len(self.params)
        return nargs == len(self.params)


def _p(*spec: str) -> tuple[Param, ...]:
    return tuple(Param(*s.split(":")) for s in spec)


_T = frozenset({TOOL})
_EVIDENCE = frozenset({EVIDENCE})

ATOMS: tuple[AtomSpec, ...] = (
    AtomSpec("called", _p("t:tool"), "bool", _T, "never", "e_i calls tool t"),
    AtomSpec("called_any", (), "bool", _T, "never", "e_i is a tool call"),
    AtomSpec(
        "count", _p("t:tool"), "int", _T, "never", "number of calls of t in [0, i]", stateful=True
    ),
    AtomSpec(
        "consecutive_count",
        _p("t:tool"),
        "int",
        _T,
        "never",
        "length of the run of calls of t ending at i (0 if e_i is not t)",
        stateful=True,
        run=True,
    ),
    AtomSpec(
        "arg_has",
        _p("t:tool", "re:regex"),
        "bool",
        _T,
        "e_i calls t and its args are missing",
        "e_i calls t and re matches its args (compact JSON)",
    ),
    AtomSpec(
        "arg_field_has",
        _p("t:tool", "f:field", "re:regex"),
        "bool",
        _T,
        "e_i calls t and its args are missing",
        "e_i calls t and re matches field f",
    ),
    AtomSpec(
        "arg_eq",
        _p("t:tool", "f:field", "v:value"),
        "bool",
        _T,
        "e_i calls t and its args are missing",
        "e_i calls t and field f equals v",
    ),
    AtomSpec(
        "arg_paths_within",
        _p("t:tool", "p:path"),
        "bool",
        _T,
        "e_i calls t and its args are missing",
        "every path-like value in e_i's args lies under one of the prefixes (whole components)",
        variadic=True,
    ),
    AtomSpec(
        "output_has",
        _p("t:tool", "re:regex"),
        "bool",
        _T,
        "e_i calls t and its result is missing",
        "e_i calls t and re matches its result",
    ),
    AtomSpec(
        "perm",
        _p("p:perm"),
        "bool",
        frozenset(),
        "never",
        "the agent has permission P (agents.<id>.permissions)",
        stateful=True,
    ),
    AtomSpec(
        "contains",
        _p("f:field"),
        "bool",
        frozenset({"data_write"}),
        "never",
        "some data_write in [0, i] wrote field f",
        stateful=True,
    ),
    AtomSpec(
        "flow",
        _p("src:agent", "dst:agent"),
        "bool",
        # delegation too: a hand-over carries the delegating agent's data (SEMANTICS §5 lists
        # data_read and message; without delegation a leak would be blamed one event late)
        frozenset({"data_read", "message", "delegation"}),
        "never",
        "data written by src has reached dst in [0, i]",
        stateful=True,
    ),
    AtomSpec(
        "llm_output_contains",
        _p("re:regex"),
        "bool",
        frozenset({LLM_RESP}),
        "e_i's output is missing",
        "re matches e_i's LLM output",
        aliases=("llm_said",),
    ),
    AtomSpec(
        "llm_input_contains",
        _p("re:regex"),
        "bool",
        frozenset({LLM_REQ}),
        "e_i's input is missing",
        "re matches e_i's LLM input",
        aliases=("prompt_contains",),
    ),
    AtomSpec(
        "system_prompt_present",
        (),
        "bool",
        frozenset({LLM_REQ}),
        "e_i's input is missing",
        "e_i's input has a system message",
    ),
    AtomSpec(
        "context_length",
        (),
        "int",
        frozenset({LLM_REQ}),
        "e_i's input is missing",
        "characters of e_i's LLM input",
    ),
    AtomSpec(
        "token_count",
        _p("kind:kind"),
        "int",
        frozenset({LLM_RESP}),
        "usage missing on any response in [0, i]",
        "sum of kind (input, output, total) tokens over responses in [0, i]",
        stateful=True,
    ),
    AtomSpec(
        "latency_exceeds",
        _p("t:tool", "ms:number"),
        "bool",
        _T,
        "e_i calls t and has no end time",
        "e_i calls t and lasted longer than ms milliseconds",
    ),
    AtomSpec(
        "called_with",
        _p("t:tool", "re:regex"),
        "bool",
        _T,
        "e_i calls t and its args are missing",
        "called(t) and arg_has(t, re)",
        same_as="arg_has",
    ),
    AtomSpec(
        "count_with",
        _p("t:tool", "re:regex"),
        "int",
        _T,
        "args missing on a call of t in [0, i]",
        "number of called_with(t, re) events in [0, i]",
        stateful=True,
    ),
    AtomSpec(
        "arg_length",
        _p("t:tool", "f:field"),
        "int",
        _T,
        "e_i calls t and its args are missing or have no field f",
        "characters of field f of e_i's args",
    ),
    AtomSpec(
        "arg_numeric",
        _p("t:tool", "f:field"),
        "number",
        _T,
        "e_i calls t and args missing, no field f, or not numeric",
        "field f of e_i's args as a number (a numeric string counts)",
    ),
    AtomSpec(
        "arg_value",
        _p("t:tool", "f:field"),
        "any",
        _T,
        "the latest call of t had no args or no field f, or none yet, or a call with no tool since",
        "the JSON value of field f of the latest call of t (Sponsio's ArgValue)",
    ),
    AtomSpec(
        "ctx",
        _p("k:key", "v:value"),
        "bool",
        frozenset({"context_update"}),
        "no context_update in [0, i] recorded k",
        "the latest context value of k equals v",
        stateful=True,
    ),
    AtomSpec(
        "ctx_matches",
        _p("k:key", "re:regex"),
        "bool",
        frozenset({"context_update"}),
        "no context_update in [0, i] recorded k",
        "the latest context value of k matches re",
        stateful=True,
    ),
    AtomSpec(
        "ctx_value",
        _p("k:key"),
        "any",
        frozenset({"context_update"}),
        "no context_update in [0, i] recorded k",
        "the latest context value of k, as recorded (Sponsio's CtxValue)",
        stateful=True,
    ),
    AtomSpec(
        "claim_emitted",
        _p("p:pred"),
        "bool",
        _EVIDENCE,
        "e_i is an evidence event whose predicate was not recorded",
        "e_i is an evidence event (a claim verdict) of predicate p",
    ),
    AtomSpec(
        "evidence_verdict",
        _p("p:pred", "v:value"),
        "bool",
        _EVIDENCE,
        "e_i is an evidence event of p (or of no recorded predicate) with no recorded verdict",
        "e_i is an evidence event of p whose verdict is v (any case)",
    ),
    AtomSpec(
        "evidence_action",
        _p("p:pred", "a:value"),
        "bool",
        _EVIDENCE,
        "e_i is an evidence event of p (or of no recorded predicate) with no recorded action",
        "e_i is an evidence event of p whose policy action is a (any case)",
    ),
    AtomSpec(
        "delegation_depth",
        (),
        "int",
        frozenset({"message", "delegation"}),
        "never",
        "length of the delegation chain that reached e_i's agent",
        stateful=True,
    ),
)

_BY_NAME: dict[str, AtomSpec] = {}
for _spec in ATOMS:
    _BY_NAME[_spec.name] = _spec
    for _alias in _spec.aliases:
        _BY_NAME[_alias] = _spec


def lookup(name: str) -> AtomSpec | None:
    """The atom registered under ``name`` (or one of its aliases), or None."""
    return _BY_NAME.get(name)


def canonical_name(name: str) -> str:
    """The registered name for ``name`` (``llm_said`` → ``llm_output_contains``)."""
    spec = _BY_NAME.get(name)
    return spec.name if spec else name


def names() -> list[str]:
    """Every accepted atom name, aliases included, sorted."""
    return sorted(_BY_NAME)


def regex_params(spec: AtomSpec) -> list[int]:
    """Positions of the regex parameters of ``spec`` (for RE2 checks at load time)."""
    return [i for i, p in enumerate(spec.params) if p.kind == "regex"]


def grounding_name(name: str) -> str:
    """The atom whose rule grounds ``name``: aliases resolved, then ``same_as``."""
    spec = _BY_NAME.get(name)
    if spec is None:
        return name
    return spec.same_as or spec.name


def spec_of(name: str, args: tuple[Any, ...]) -> AtomSpec:
    """The registered atom ``name`` when it takes ``args``; ValueError otherwise."""
    spec = _BY_NAME.get(name)
    if spec is None or not spec.accepts(len(args)):
        raise ValueError(f"unknown atom or wrong arguments: {name}{args}")
    return spec


class IncompleteGrounding(RuntimeError):
    """A grounding has no rule for some registered atom (raised when its module is imported)."""


R = TypeVar("R", bound=Callable[..., Any])


class Rules(Generic[R]):
    """One grounding's table: one function per atom, by registered name.

    ``rule`` registers a function under its name without the leading
    underscores and the optional ``prefix``; ``complete`` fails unless every
    atom of ``needed`` (default: the registry, ``same_as`` atoms left out)
    has one; ``of`` finds the rule of an atom name (aliases and ``same_as``
    resolved).
    """

    def __init__(self, grounding: str, prefix: str = "") -> None:
        self.grounding = grounding
        self.prefix = prefix
        self.table: dict[str, R] = {}

    def rule(self, fn: R) -> R:
        """Register ``fn`` as the rule of the atom it is named after."""
        name = fn.__name__.lstrip("_").removeprefix(self.prefix)
        if name not in _BY_NAME or _BY_NAME[name].name != name:
            raise IncompleteGrounding(f"{self.grounding}: {fn.__name__} names no registered atom")
        self.table[name] = fn
        return fn

    def complete(self, needed: Iterable[AtomSpec] = ATOMS) -> Rules[R]:
        """This table, after checking that every needed atom has a rule."""
        missing = [s.name for s in needed if s.same_as is None and s.name not in self.table]
        if missing:
            raise IncompleteGrounding(f"{self.grounding} grounding misses {', '.join(missing)}")
        return self

    def of(self, name: str) -> R:
        """The rule that grounds atom ``name``."""
        return self.table[grounding_name(name)]
