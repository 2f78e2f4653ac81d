"""The oracle: SEMANTICS.md §2–§4.1 written out as directly as possible.

A grounded trace is a sequence of valuations, one per event, each mapping
every atom of the formula to its value (bool, number, string) or ``None``
for unknown. Values are Kleene: ``True``, ``False`` or ``None``. Every
operator is its table row in §3, position by position, with no cleverness;
it is quadratic and slow on purpose, so that the monitor and the columnar
evaluator can be held against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sponsio_audit.ltl.ast import (
    Always,
    AlwaysWithin,
    And,
    Atom,
    Bool,
    Cmp,
    Eventually,
    EventuallyWithin,
    Formula,
    Historically,
    HistoricallyWithin,
    Implies,
    Next,
    Not,
    Num,
    Once,
    OnceWithin,
    Or,
    Release,
    Since,
    Str,
    StrongNext,
    Term,
    Trigger,
    Until,
    WeakUntil,
    WeakYesterday,
    Yesterday,
    is_future_free,
)
from sponsio_audit.ltl.nnf import nnf
from sponsio_audit.vocab import GUARANTEE, LIVENESS

K = bool | None
"""A Kleene value: True, False, or None for unknown."""


@dataclass(frozen=True)
class Composite:
    """A JSON list, object or null (or a non-finite float) as a value term's value
    (``arg_value``, ``ctx_value``): its canonical JSON text, keys sorted."""

    text: str


Value = bool | int | float | str | Composite | None
Valuation = Mapping[Atom, Value]
Trace = Sequence[Valuation]


# ---------------------------------------------------------------- Kleene


def k_not(a: K) -> K:
    return None if a is None else not a


def k_and(a: K, b: K) -> K:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def k_or(a: K, b: K) -> K:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def k_all(values: Iterable[K]) -> K:
    """Kleene conjunction of many values (True when there are none)."""
    out: K = True
    for v in values:
        out = k_and(out, v)
    return out


def k_any(values: Iterable[K]) -> K:
    """Kleene disjunction of many values (False when there are none)."""
    out: K = False
    for v in values:
        out = k_or(out, v)
    return out


def _kind(x: object) -> str:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, (int, float)):
        return "num"
    return "str" if isinstance(x, str) else "composite"


def compare(op: str, a: Value, b: Value) -> K:
    """``a op b``; unknown when an operand is unknown.

    Values of different kinds (number, string, bool, composite) are never
    equal; order is defined between two numbers or two strings only, any
    other ordered comparison is unknown (never guessed)."""
    if a is None or b is None:
        return None
    ka, kb = _kind(a), _kind(b)
    if op in ("==", "!="):
        same = ka == kb and a == b
        return same if op == "==" else not same
    if ka != kb or ka not in ("num", "str"):
        return None
    match op:
        case "<=":
            return a <= b  # type: ignore[operator]
        case "<":
            return a < b  # type: ignore[operator]
        case ">=":
            return a >= b  # type: ignore[operator]
        case ">":
            return a > b  # type: ignore[operator]
    raise ValueError(f"unknown comparison {op!r}")


# ---------------------------------------------------------------- evaluation


class _Eval:
    """Values of every sub-formula at every position 0..n of one trace.

    With ``open_end`` the trace is a prefix e_0..e_{n-1} whose future is
    open (§4.1): what lies after the last position counts as true.
    """

    def __init__(self, trace: Trace, open_end: bool = False) -> None:
        self.trace = trace
        self.n = len(trace)
        self.open = open_end
        self.memo: dict[Formula, list[K]] = {}

    def values(self, f: Formula) -> list[K]:
        got = self.memo.get(f)
        if got is None:
            got = [self.at(f, i) for i in range(self.n + 1)]
            self.memo[f] = got
        return got

    def v(self, f: Formula, i: int) -> K:
        return self.values(f)[i]

    def term(self, t: Term, i: int) -> Value:
        match t:
            case Num(x) | Str(x):
                return x
            case Atom():
                return self.trace[i][t]
        raise TypeError(f"not a term: {t!r}")

    def at(self, f: Formula, i: int) -> K:
        n, v = self.n, self.v
        match f:
            case Bool(b):
                return b
            case Atom():
                if i >= n:
                    return False
                val = self.trace[i][f]
                return None if val is None else bool(val)
            case Cmp(op, left, right):
                if i >= n:
                    return False
                return compare(op, self.term(left, i), self.term(right, i))
            case Not(a):
                return k_not(v(a, i))
            case And(a, b):
                return k_and(v(a, i), v(b, i))
            case Or(a, b):
                return k_or(v(a, i), v(b, i))
            case Implies(a, b):
                return k_or(k_not(v(a, i)), v(b, i))
            case Next(a):
                return True if i >= n - 1 else v(a, i + 1)
            case StrongNext(a):
                if i >= n - 1:
                    return self.open and i == n - 1
                return v(a, i + 1)
            case Eventually(a):
                return True if self.open else k_any(v(a, j) for j in range(i, n))
            case Always(a):
                return k_all(v(a, j) for j in range(i, n))
            case Until(a, b):
                return self.until(a, b, i)
            case WeakUntil(a, b):
                return k_or(self.until(a, b, i), k_all(v(a, j) for j in range(i, n)))
            case Release(a, b):
                # φ R ψ = ¬(¬φ U ¬ψ): every j in [i, n) has ψ, or φ somewhere in [i, j)
                return k_all(
                    k_or(v(b, j), k_any(v(a, m) for m in range(i, j))) for j in range(i, n)
                )
            case Yesterday(a):
                return False if i == 0 else v(a, i - 1)
            case WeakYesterday(a):
                return True if i == 0 else v(a, i - 1)
            case Once(a):
                return k_any(v(a, j) for j in range(0, i + 1))
            case Historically(a):
                return k_all(v(a, j) for j in range(0, i + 1))
            case Since(a, b):
                return k_any(
                    k_and(v(b, j), k_all(v(a, m) for m in range(j + 1, i + 1)))
                    for j in range(0, i + 1)
                )
            case Trigger(a, b):
                # ¬(¬φ S ¬ψ): every j ≤ i has ψ, or φ somewhere in (j, i]
                return k_all(
                    k_or(v(b, j), k_any(v(a, m) for m in range(j + 1, i + 1)))
                    for j in range(0, i + 1)
                )
            case OnceWithin(k, a):
                return k_any(v(a, j) for j in range(max(0, i - k), i + 1))
            case HistoricallyWithin(k, a):
                return k_all(v(a, j) for j in range(max(0, i - k), i + 1))
            case EventuallyWithin(lo, hi, a):
                if self.open and i + hi > n - 1:
                    return True
                return k_any(v(a, j) for j in range(i + lo, min(i + hi, n - 1) + 1))
            case AlwaysWithin(lo, hi, a):
                return k_all(v(a, j) for j in range(i + lo, min(i + hi, n - 1) + 1))
        raise TypeError(f"not a formula: {f!r}")

    def until(self, a: Formula, b: Formula, i: int) -> K:
        v, n = self.v, self.n
        closed = k_any(k_and(v(b, j), k_all(v(a, m) for m in range(i, j))) for j in range(i, n))
        if self.open:
            return k_or(closed, k_all(v(a, m) for m in range(i, n)))
        return closed


def holds(f: Formula, trace: Trace) -> K:
    """``σ, 0 ⊨ f`` in Kleene logic (SEMANTICS.md §3)."""
    return _Eval(trace).v(f, 0)


def values(f: Formula, trace: Trace) -> list[K]:
    """``σ, i ⊨ f`` for every position i in 0..n-1."""
    return _Eval(trace).values(f)[: len(trace)]


def prefix_value(f: Formula, trace: Trace, k: int) -> K:
    """The prefix value of ``f`` on e_0..e_k (SEMANTICS.md §4.1)."""
    return _Eval(trace[: k + 1], open_end=True).v(nnf(f), 0)


def first_bad_prefix(f: Formula, trace: Trace) -> int | None:
    """The first k whose prefix e_0..e_k is bad, or None."""
    g = nnf(f)
    for k in range(len(trace)):
        if _Eval(trace[: k + 1], open_end=True).v(g, 0) is False:
            return k
    return None


@dataclass(frozen=True)
class Check:
    """The result of one formula on one trace.

    ``value`` is the Kleene value; when it is False, ``kind`` is
    "guarantee" (a bad prefix exists, ``blame`` is the first) or "liveness"
    (``blame`` is the last event, ``opened`` the position whose obligation
    was left open, when the formula is ``G ψ``). ``offending`` lists every
    position where ψ is false for ``G ψ`` with ψ future-free, else the blame.
    """

    value: K
    kind: str | None = None
    blame: int | None = None
    offending: tuple[int, ...] = ()
    opened: int | None = None

    def shifted(self, k: int) -> Check:
        """This check with every position moved by ``k`` (a suffix's positions in its trace)."""
        if not k:
            return self
        return Check(
            self.value,
            self.kind,
            None if self.blame is None else self.blame + k,
            tuple(i + k for i in self.offending),
            None if self.opened is None else self.opened + k,
        )


def check(f: Formula, trace: Trace) -> Check:
    """Value, violation kind, blame and offending positions of ``f`` on ``trace``."""
    ev = _Eval(trace)
    value = ev.v(f, 0)
    if value is not False:
        return Check(value)
    bad = first_bad_prefix(f, trace)
    if isinstance(f, Always) and is_future_free(f.arg):
        offending = tuple(i for i, x in enumerate(ev.values(f.arg)[: len(trace)]) if x is False)
        return Check(False, GUARANTEE, bad, offending)
    if bad is not None:
        return Check(False, GUARANTEE, bad, (bad,))
    last = len(trace) - 1 if trace else None
    opened = None
    if isinstance(f, Always):
        opened = next((i for i, x in enumerate(ev.values(f.arg)[: len(trace)]) if x is False), None)
    return Check(False, LIVENESS, last, (last,) if last is not None else (), opened)
