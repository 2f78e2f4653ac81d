"""The value *now* of a future-free formula, with constant state per operator.

The guard's fast path for the clauses that matter most: a safety guarantee
``G ψ`` with ψ future-free (every safety pattern of SEMANTICS.md §6) is
violated exactly at the events where ψ is false now (§4.1 "offending
events"), and a ``first_match`` assumption activates at the first event
where it is true now (§4.2). The ``Monitor`` of ``ltl.monitor`` answers the
prefix value at position 0, which stays false after the first failure; the
guard also needs the value at the current position to warn or observe every
offending event, hence this small evaluator.

Each formula is compiled once to a straight-line Python function (Kleene
connectives inlined, one state slot per past operator), so a step costs a
few hundred nanoseconds and never looks back at the prefix. Recurrences
(Kleene logic is distributive, so they equal the §3 definitions):
``O: o = φ ∨ o'``, ``H: h = φ ∧ h'``, ``S: s = ψ ∨ (φ ∧ s')``,
``T: t = ψ ∧ (φ ∨ t')``, ``Y``/``Z``: the child's previous value (false /
true before the first event); ``O[k]``/``H[k]`` keep the last positions
where the child was true (false) and unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sponsio_audit.ltl.ast import (
    And,
    Atom,
    Bool,
    Cmp,
    Formula,
    Historically,
    HistoricallyWithin,
    Implies,
    Not,
    Num,
    Once,
    OnceWithin,
    Or,
    Since,
    Str,
    Trigger,
    WeakYesterday,
    Yesterday,
    is_future_free,
)
from sponsio_audit.ltl.reference import K, compare

_NEVER = -(10**18)

StepFn = Callable[[Any, list[Any]], Any]


def _and(a: str, b: str) -> str:
    return (
        f"(False if ({a} is False or {b} is False) else "
        f"(None if ({a} is None or {b} is None) else True))"
    )


def _or(a: str, b: str) -> str:
    return (
        f"(True if ({a} is True or {b} is True) else "
        f"(None if ({a} is None or {b} is None) else False))"
    )


def _not(a: str) -> str:
    return f"(None if {a} is None else not {a})"


class _Compiler:
    def __init__(self, index: Mapping[Any, int] | None = None) -> None:
        self.index = index
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {"compare": compare}
        self.init: list[Any] = [0]  # slot 0: the current position
        self.names: dict[Formula, str] = {}
        self.atom_names: dict[Any, str] = {}

    def const(self, value: Any) -> str:
        name = f"c{len(self.consts)}"
        self.consts[name] = value
        return name

    def slot(self, init: Any) -> int:
        self.init.append(init)
        return len(self.init) - 1

    def term(self, t: Any) -> str:
        if isinstance(t, (Num, Str)):
            return self.const(t.value)
        got = self.atom_names.get(t)
        if got is None:
            got = f"t{len(self.atom_names)}"
            self.atom_names[t] = got
            if self.index is not None:
                self.lines.append(f"{got} = v[{self.index[t]}]")
            else:
                self.lines.append(f"{got} = v.get({self.const(t)})")
        return got

    def emit(self, f: Formula) -> str:
        got = self.names.get(f)
        if got is not None:
            return got
        e = self.expr(f)
        out = f"x{len(self.names)}"
        self.lines.append(f"{out} = {e}")
        self.names[f] = out
        return out

    def expr(self, f: Formula) -> str:
        match f:
            case Bool(b):
                return repr(bool(b))
            case Atom():
                t = self.term(f)
                return f"(None if {t} is None else bool({t}))"
            case Cmp(op, left, right):
                ta, tb = self.term(left), self.term(right)
                slow = f"compare({op!r}, {ta}, {tb})"
                if isinstance(right, Num) and isinstance(left, Atom):  # count(t) <= n: inline
                    return f"(({ta} {op} {tb}) if {ta}.__class__ is int else {slow})"
                return slow
            case Not(a):
                return _not(self.emit(a))
            case And(a, b):
                return _and(self.emit(a), self.emit(b))
            case Or(a, b):
                return _or(self.emit(a), self.emit(b))
            case Implies(a, b):
                na = self.emit(Not(a))
                return _or(na, self.emit(b))
            case Yesterday(a) | WeakYesterday(a):
                x = self.emit(a)
                k = self.slot(isinstance(f, WeakYesterday))
                tmp = f"p{k}"
                self.lines.append(f"{tmp} = s[{k}]; s[{k}] = {x}")
                return tmp
            case Once(a):
                x, k = self.emit(a), self.slot(False)
                self.lines.append(f"s[{k}] = {_or(x, f's[{k}]')}")
                return f"s[{k}]"
            case Historically(a):
                x, k = self.emit(a), self.slot(True)
                self.lines.append(f"s[{k}] = {_and(x, f's[{k}]')}")
                return f"s[{k}]"
            case Since(a, b):
                xa, xb, k = self.emit(a), self.emit(b), self.slot(False)
                inner = _and(xa, f"s[{k}]")
                self.lines.append(f"q{k} = {inner}")
                self.lines.append(f"s[{k}] = {_or(xb, f'q{k}')}")
                return f"s[{k}]"
            case Trigger(a, b):
                xa, xb, k = self.emit(a), self.emit(b), self.slot(True)
                inner = _or(xa, f"s[{k}]")
                self.lines.append(f"q{k} = {inner}")
                self.lines.append(f"s[{k}] = {_and(xb, f'q{k}')}")
                return f"s[{k}]"
            case OnceWithin(n, a) | HistoricallyWithin(n, a):
                x = self.emit(a)
                hit, unk = self.slot(_NEVER), self.slot(_NEVER)
                want = isinstance(f, OnceWithin)  # O[k] looks for true, H[k] for false
                self.lines.append(f"if {x} is {want}: s[{hit}] = i")
                self.lines.append(f"elif {x} is None: s[{unk}] = i")
                return (
                    f"({want} if s[{hit}] >= i - {n} else "
                    f"(None if s[{unk}] >= i - {n} else {not want}))"
                )
        raise ValueError(f"not a future-free formula: {f!r}")


def _build(c: _Compiler, body: list[str], label: str) -> tuple[StepFn, list[Any]]:
    src = "def step(v, s):\n" + "\n".join("    " + ln for ln in body) + "\n"
    ns: dict[str, Any] = dict(c.consts)
    exec(compile(src, f"<past {label:.60}>", "exec"), ns)
    return ns["step"], list(c.init)


class PastBank:
    """Many future-free formulas compiled into one function, sub-formulas shared.

    ``step(values)`` takes the atom values as a list in the order of
    ``index`` (atom → position) and returns the indices of the formulas that
    are false at the new event. One state list holds every operator's memory.
    """

    def __init__(self, formulas: list[Formula], index: Mapping[Any, int]) -> None:
        if not all(is_future_free(f) for f in formulas):
            raise ValueError("PastBank needs future-free formulas")
        c = _Compiler(index)
        c.lines.append("i = s[0]")
        outs = [c.emit(f) for f in formulas]
        c.lines.append("s[0] = i + 1")
        c.lines.append("out = []")
        for k, o in enumerate(outs):
            c.lines.append(f"if {o} is False: out.append({k})")
        c.lines.append("return out")
        self._fn, self._init = _build(c, c.lines, f"bank of {len(formulas)}")
        self.state: list[Any] = list(self._init)

    def step(self, values: list[Any]) -> list[int]:
        """Indices of the formulas false at the event just appended."""
        return self._fn(values, self.state)


class PastFormula:
    """A compiled future-free formula: ``step(valuation)`` gives its value at the new event.

    ``state`` is the whole memory (a short list); copy it to roll back.
    """

    def __init__(self, formula: Formula, index: Mapping[Any, int] | None = None) -> None:
        if not is_future_free(formula):
            raise ValueError("PastFormula needs a future-free formula")
        c = _Compiler(index)
        c.lines.append("i = s[0]")
        out = c.emit(formula)
        c.lines.append("s[0] = i + 1")
        c.lines.append(f"return {out}")
        self.formula = formula
        self._fn, self._init = _build(c, c.lines, repr(formula))
        self.state: list[Any] = list(self._init)

    def step(self, valuation: Any) -> K:
        """The value at the event just appended; ``valuation`` is a mapping atom → value,
        or the list of values in ``index`` order when the formula was compiled with one."""
        return self._fn(valuation, self.state)

    def reset(self) -> None:
        """Back to the empty trace."""
        self.state = list(self._init)
