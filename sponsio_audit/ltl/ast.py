"""Frozen formula tree for SEMANTICS.md §3 (plus the internal duals of §4.1).

Every node is an immutable, hashable dataclass, so formulas can be used as
dict keys (sub-formula caches, grounding tables) and compared structurally.
A node's hash is computed once, when it is built (children first, so in O(1)
from theirs): a dataclass's own ``__hash__`` would rehash the whole subtree
on every call, quadratic (and recursive) for a 5 000-term disjunction.
Backends (printer, reference evaluator, monitor, columnar) each have one
small function per node kind and dispatch with ``match``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Union

Arg = Union[str, int, float]
"""An atom argument: a bare identifier or string (str) or a number."""


# ---------------------------------------------------------------- terms


@dataclass(frozen=True)
class Num:
    """A numeric constant in a comparison."""

    value: int | float


@dataclass(frozen=True)
class Str:
    """A string constant in a comparison."""

    value: str


# ---------------------------------------------------------------- formulas


@dataclass(frozen=True)
class Bool:
    """``true`` or ``false``."""

    value: bool


@dataclass(frozen=True)
class Atom:
    """An atom ``name(arg, …)``; bool-valued as a formula, int/number-valued as a term.

    Atoms key every valuation, so their hash is computed once and kept.
    """

    name: str
    args: tuple[Arg, ...] = ()
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.name, self.args)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Atom], tuple[str, tuple[Arg, ...]]]:
        """Pickle by constructor: the kept hash is recomputed where the atom is loaded
        (string hashes differ between processes: Spark executors, workers)."""
        return (Atom, (self.name, self.args))


Term = Union[Atom, Num, Str]

CMP_OPS = ("<=", "<", ">=", ">", "==", "!=")


@dataclass(frozen=True)
class Cmp:
    """``left op right`` with op one of CMP_OPS; unknown when an operand is unknown."""

    op: str
    left: Term
    right: Term


@dataclass(frozen=True)
class Not:
    arg: Formula


@dataclass(frozen=True)
class And:
    left: Formula
    right: Formula


@dataclass(frozen=True)
class Or:
    left: Formula
    right: Formula


@dataclass(frozen=True)
class Implies:
    left: Formula
    right: Formula


# future


@dataclass(frozen=True)
class Next:
    """``X φ``: weak next (true at the last position)."""

    arg: Formula


@dataclass(frozen=True)
class Eventually:
    """``F φ``."""

    arg: Formula


@dataclass(frozen=True)
class Always:
    """``G φ``."""

    arg: Formula


@dataclass(frozen=True)
class Until:
    """``φ U ψ`` (strong)."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class WeakUntil:
    """``φ W ψ`` = (φ U ψ) ∨ G φ."""

    left: Formula
    right: Formula


# past


@dataclass(frozen=True)
class Yesterday:
    """``Y φ``: false at position 0."""

    arg: Formula


@dataclass(frozen=True)
class Once:
    """``O φ``."""

    arg: Formula


@dataclass(frozen=True)
class Historically:
    """``H φ``."""

    arg: Formula


@dataclass(frozen=True)
class Since:
    """``φ S ψ``."""

    left: Formula
    right: Formula


# bounded


@dataclass(frozen=True)
class OnceWithin:
    """``O[k] φ``: φ at some j in [max(0, i-k), i]."""

    k: int
    arg: Formula


@dataclass(frozen=True)
class HistoricallyWithin:
    """``H[k] φ``: φ at every j in [max(0, i-k), i]."""

    k: int
    arg: Formula


@dataclass(frozen=True)
class EventuallyWithin:
    """``F[a,b] φ``: φ at some j in [i+a, min(i+b, n-1)]."""

    a: int
    b: int
    arg: Formula


# internal duals (negation normal form, SEMANTICS.md §4.1); printable and
# parseable so that every tree round-trips, but not part of the user syntax.


@dataclass(frozen=True)
class StrongNext:
    """``N φ`` = ¬X¬φ: i < n-1 and φ at i+1."""

    arg: Formula


@dataclass(frozen=True)
class Release:
    """``φ R ψ`` = ¬(¬φ U ¬ψ): ψ holds until and including a φ, or forever."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class WeakYesterday:
    """``Z φ`` = ¬Y¬φ: true at position 0, else φ at i-1."""

    arg: Formula


@dataclass(frozen=True)
class Trigger:
    """``φ T ψ`` = ¬(¬φ S ¬ψ): every j ≤ i has ψ, or φ at some position in (j, i]."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class AlwaysWithin:
    """``G[a,b] φ`` = ¬F[a,b]¬φ: φ at every j in [i+a, min(i+b, n-1)]."""

    a: int
    b: int
    arg: Formula


Formula = Union[
    Bool,
    Atom,
    Cmp,
    Not,
    And,
    Or,
    Implies,
    Next,
    Eventually,
    Always,
    Until,
    WeakUntil,
    Yesterday,
    Once,
    Historically,
    Since,
    OnceWithin,
    HistoricallyWithin,
    EventuallyWithin,
    StrongNext,
    Release,
    WeakYesterday,
    Trigger,
    AlwaysWithin,
]


def _hashed_once(cls: type) -> None:
    """Give node class ``cls`` a hash computed at construction and kept (see module doc).

    The kept hash is left out of pickles and recomputed on load: string hashes
    differ between processes.
    """
    names = tuple(f.name for f in fields(cls) if f.compare)
    init = cls.__init__  # type: ignore[misc]

    def rehash(self: Any) -> None:
        object.__setattr__(self, "_h", hash((cls.__name__, *(getattr(self, n) for n in names))))

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        rehash(self)

    def __getstate__(self: Any) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_h"}

    def __setstate__(self: Any, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        rehash(self)

    cls.__init__ = __init__  # type: ignore[misc]
    cls.__hash__ = lambda self: self._h  # type: ignore[method-assign, assignment, misc]
    cls.__getstate__ = __getstate__  # type: ignore[attr-defined]
    cls.__setstate__ = __setstate__  # type: ignore[attr-defined]


_NODES = (Num, Str, Bool, Cmp, Not, And, Or, Implies, Next, Eventually, Always, Until, WeakUntil,
          Yesterday, Once, Historically, Since, OnceWithin, HistoricallyWithin, EventuallyWithin,
          StrongNext, Release, WeakYesterday, Trigger, AlwaysWithin)  # fmt: skip
for _cls in _NODES:
    _hashed_once(_cls)

TRUE = Bool(True)
FALSE = Bool(False)

UNARY_TEMPORAL = (
    Next,
    Eventually,
    Always,
    Yesterday,
    Once,
    Historically,
    StrongNext,
    WeakYesterday,
)
BINARY = (And, Or, Implies, Until, WeakUntil, Since, Release, Trigger)
FUTURE = (
    Next,
    Eventually,
    Always,
    Until,
    WeakUntil,
    EventuallyWithin,
    StrongNext,
    Release,
    AlwaysWithin,
)
PAST = (
    Yesterday,
    Once,
    Historically,
    Since,
    OnceWithin,
    HistoricallyWithin,
    WeakYesterday,
    Trigger,
)


def children(f: Formula) -> tuple[Formula, ...]:
    """The direct sub-formulas of ``f`` (terms of a comparison are not formulas)."""
    match f:
        case Bool() | Atom() | Cmp():
            return ()
        case Not(a) | Next(a) | Eventually(a) | Always(a) | Yesterday(a) | Once(a):
            return (a,)
        case Historically(a) | StrongNext(a) | WeakYesterday(a):
            return (a,)
        case OnceWithin(_, a) | HistoricallyWithin(_, a):
            return (a,)
        case EventuallyWithin(_, _, a) | AlwaysWithin(_, _, a):
            return (a,)
        case And(l, r) | Or(l, r) | Implies(l, r) | Until(l, r) | WeakUntil(l, r):
            return (l, r)
        case Since(l, r) | Release(l, r) | Trigger(l, r):
            return (l, r)
    raise TypeError(f"not a formula: {f!r}")


def subformulas(f: Formula) -> list[Formula]:
    """Every sub-formula of ``f``, children before parents, without repeats.

    Iterative (an explicit stack), so any depth is walked; the order is the
    recursive post-order: children left to right, then the node.
    """
    seen: dict[Formula, None] = {}
    stack: list[tuple[Formula, bool]] = [(f, False)]
    while stack:
        g, expanded = stack.pop()
        if expanded:
            seen.setdefault(g, None)
            continue
        if g in seen:
            continue
        stack.append((g, True))
        stack.extend((c, False) for c in reversed(children(g)))
    return list(seen)


def atoms(f: Formula) -> list[Atom]:
    """Every atom used in ``f`` (as a formula or as a comparison term), without repeats."""
    out: dict[Atom, None] = {}
    for g in subformulas(f):
        match g:
            case Atom():
                out.setdefault(g, None)
            case Cmp(_, left, right):
                for t in (left, right):
                    if isinstance(t, Atom):
                        out.setdefault(t, None)
    return list(out)


def is_future_free(f: Formula) -> bool:
    """True when no future operator occurs in ``f`` (a pure past formula)."""
    return not any(isinstance(g, FUTURE) for g in subformulas(f))


def is_past_free(f: Formula) -> bool:
    """True when no past operator occurs in ``f``."""
    return not any(isinstance(g, PAST) for g in subformulas(f))
