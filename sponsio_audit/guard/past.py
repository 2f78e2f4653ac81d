"""The value *now* of a future-free formula, with constant state per operator.

The guard's fast path for the clauses that matter most: a safety guarantee
``G ψ`` with ψ future-free (every safety pattern of SEMANTICS.md §6) is
violated exactly at the events where ψ is false now (§4.1 "offending
events"), and a ``first_match`` assumption activates at the first event
where it is true now (§4.2). The ``Monitor`` of ``ltl.monitor`` answers the
prefix value at position 0, which stays false after the first failure; the
guard also needs the value at the current position to warn or observe every
offending event, hence this small evaluator.

Each formula is compiled once to straight-line Python (one state slot per
past operator), so a step costs a few hundred nanoseconds and never looks
back at the prefix. ``Compiler`` is shared with ``bank``, which fuses the
grounding, many formulas and the obligations of ``live`` into one function.
Recurrences (Kleene logic is distributive, so they equal the §3
definitions): ``O: o = φ ∨ o'``, ``H: h = φ ∧ h'``, ``S: s = ψ ∨ (φ ∧ s')``,
``T: t = ψ ∧ (φ ∨ t')``, ``Y``/``Z``: the child's previous value (false /
true before the first event); ``O[k]``/``H[k]`` keep the last positions
where the child was true (false) and unknown.

Code generation tracks a *kind* per value so that two-valued logic is used
where no unknown can occur: ``b`` a bool (never unknown), ``k`` a Kleene
value (True, False, None); terms may also be ``i`` (an int, never unknown)
or ``a`` (anything). Literal ``True``/``False``/``None`` fold away. Several
variants of one function may share a state list (``bank`` specialises its
function per called tool): slots are then named (``layout``) and a past
operator's state keeps the kind it has in the ``generic`` variant.
"""

from __future__ import annotations

import re
from collections import Counter
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
LITERALS = {"True": "b", "False": "b", "None": "k"}

StepFn = Callable[..., Any]


def k_not(a: str, ka: str) -> tuple[str, str]:
    """Code (and kind) of the Kleene negation of the value named ``a``."""
    if a in LITERALS:
        return ("None" if a == "None" else str(a != "True")), LITERALS[a]
    if ka == "b":
        return f"(not {a})", "b"
    return f"(None if {a} is None else not {a})", "k"


def k_and(a: str, ka: str, b: str, kb: str) -> tuple[str, str]:
    """Code (and kind) of the Kleene conjunction of the values named ``a`` and ``b``."""
    if a == "False" or b == "False":
        return "False", "b"
    if a == "True":
        return b, kb
    if b == "True":
        return a, ka
    if ka == "b" and kb == "b":
        return f"({a} and {b})", "b"
    if ka == "b":
        return f"({b} if {a} else False)", "k"
    if kb == "b":
        return f"({a} if {b} else False)", "k"
    return (
        f"(False if ({a} is False or {b} is False) else "
        f"(None if ({a} is None or {b} is None) else True))"
    ), "k"


def k_or(a: str, ka: str, b: str, kb: str) -> tuple[str, str]:
    """Code (and kind) of the Kleene disjunction of the values named ``a`` and ``b``."""
    if a == "True" or b == "True":
        return "True", "b"
    if a == "False":
        return b, kb
    if b == "False":
        return a, ka
    if ka == "b" and kb == "b":
        return f"({a} or {b})", "b"
    if ka == "b":
        return f"(True if {a} else {b})", "k"
    if kb == "b":
        return f"(True if {b} else {a})", "k"
    return (
        f"(True if ({a} is True or {b} is True) else "
        f"(None if ({a} is None or {b} is None) else False))"
    ), "k"


class Compiler:
    """Straight-line code for future-free formulas over one state list ``s``.

    Atom values come from ``v[index[atom]]`` (``index`` given), from
    ``v.get(atom)`` (a mapping; a missing atom is unknown), or from locals
    bound beforehand in ``terms`` (the fused grounding of ``bank``).
    ``kinds`` gives the kind of each atom's value (default ``a``).
    """

    def __init__(
        self,
        index: Mapping[Any, int] | None = None,
        kinds: Mapping[Any, str] | None = None,
        layout: dict[Any, int] | None = None,
        init: list[Any] | None = None,
    ) -> None:
        self.index = index
        self.kinds = dict(kinds or {})
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {"compare": compare}
        self.init: list[Any] = [0] if init is None else init  # slot 0: the current position
        self.layout: dict[Any, int] = {} if layout is None else layout
        self.node_kinds: dict[Formula, str] = {}
        self.generic: dict[Formula, str] | None = None  # node kinds of the generic variant
        self.names: dict[Formula, str] = {}
        self.kind: dict[str, str] = dict(LITERALS)
        self.terms: dict[Any, str] = {}

    def const(self, value: Any) -> str:
        name = f"c{len(self.consts)}"
        self.consts[name] = value
        return name

    def slot(self, init: Any, key: Any) -> int:
        """The state slot named ``key``: a fresh one holding ``init``, or the one already
        laid out under that name (code variants compiled over the same ``layout``)."""
        got = self.layout.get(key)
        if got is None:
            self.init.append(init)
            got = self.layout[key] = len(self.init) - 1
        return got

    def local(self, code: str, kind: str, prefix: str = "x") -> str:
        """Assign ``code`` to a fresh local (literals and names are used as they are)."""
        if code in LITERALS or code.isidentifier():
            return code
        name = f"{prefix}{len(self.kind)}"
        self.lines.append(f"{name} = {code}")
        self.kind[name] = kind
        return name

    def term(self, t: Any) -> str:
        if isinstance(t, (Num, Str)):
            v = t.value
            simple = isinstance(v, (int, float)) and not isinstance(v, bool)
            return repr(v) if simple and repr(v)[-1].isdigit() else self.const(v)
        got = self.terms.get(t)
        if got is None:
            got = f"t{len(self.terms)}"
            self.terms[t] = got
            self.kind[got] = self.kinds.get(t, "a")
            if self.index is not None:
                self.lines.append(f"{got} = v[{self.index[t]}]")
            else:
                self.lines.append(f"{got} = v.get({self.const(t)})")
        return got

    def emit(self, f: Formula) -> str:
        """A name (local or literal) holding the value of ``f`` at the new event."""
        got = self.names.get(f)
        if got is None:
            got = self.local(*self.expr(f))
            self.names[f] = got
            self.node_kinds[f] = self.kind[got]
        return got

    def skind(self, f: Formula, own: str) -> str:
        """The kind of past node ``f``'s state: as in the ``generic`` variant when
        compiling a specialised one (its state also comes from other variants)."""
        return self.generic.get(f, own) if self.generic is not None else own

    def _store(self, k: int, code: str, kind: str) -> tuple[str, str]:
        """Store a past node's new value ``code`` in slot ``k``; its name."""
        if code in LITERALS:  # decided now
            self.lines.append(f"s[{k}] = {code}")
            return code, kind
        write = "" if code == f"s[{k}]" else f" = s[{k}]"  # unchanged: just read
        self.lines.append(f"o{k}{write} = {code}")
        self.kind[f"o{k}"] = kind
        return f"o{k}", kind

    def _two(self, a: Formula, b: Formula) -> tuple[str, str, str, str]:
        x, y = self.emit(a), self.emit(b)
        return x, self.kind[x], y, self.kind[y]

    def expr(self, f: Formula) -> tuple[str, str]:
        match f:
            case Bool(b):
                return repr(bool(b)), "b"
            case Atom():
                t = self.term(f)
                tk = self.kind[t]
                if tk in ("b", "k"):
                    return t, tk
                if tk == "i":
                    return f"bool({t})", "b"
                return f"(None if {t} is None else bool({t}))", "k"
            case Cmp(op, left, right):
                ta, tb = self.term(left), self.term(right)
                if self.kind.get(ta) == "i" and isinstance(right, Num) and tb[-1].isdigit():
                    return f"({ta} {op} {tb})", "b"  # count(t) <= n: both numbers
                slow = f"compare({op!r}, {ta}, {tb})"
                if isinstance(right, Num) and isinstance(left, Atom):  # inline int <= n
                    return f"(({ta} {op} {tb}) if {ta}.__class__ is int else {slow})", "k"
                return slow, "k"
            case Not(a):
                x = self.emit(a)
                return k_not(x, self.kind[x])
            case And(a, b):
                return k_and(*self._two(a, b))
            case Or(a, b):
                return k_or(*self._two(a, b))
            case Implies(a, b):
                x, y = self.emit(Not(a)), self.emit(b)
                return k_or(x, self.kind[x], y, self.kind[y])
            case Yesterday(a) | WeakYesterday(a):
                x = self.emit(a)
                k = self.slot(isinstance(f, WeakYesterday), f)
                tmp, kind = f"p{k}", self.skind(f, self.kind[x])
                self.lines.append(f"{tmp} = s[{k}]; s[{k}] = {x}")
                self.kind[tmp] = kind
                return tmp, kind
            case Once(a) | Historically(a):
                x, k = self.emit(a), self.slot(isinstance(f, Historically), f)
                join = k_and if isinstance(f, Historically) else k_or
                code, kind = join(x, self.kind[x], f"s[{k}]", self.skind(f, self.kind[x]))
                return self._store(k, code, kind)
            case Since(a, b) | Trigger(a, b):
                xa, ka, xb, kb = self._two(a, b)
                trig = isinstance(f, Trigger)
                k = self.slot(trig, f)
                sk = self.skind(f, "b" if ka == kb == "b" else "k")
                inner, outer = (k_or, k_and) if trig else (k_and, k_or)
                code, kind = inner(xa, ka, f"s[{k}]", sk)
                q = self.local(code, kind, "q")
                return self._store(k, *outer(xb, kb, q, kind))
            case OnceWithin(n, a) | HistoricallyWithin(n, a):
                x = self.emit(a)
                want = isinstance(f, OnceWithin)  # O[k] looks for true, H[k] for false
                hit, unk = self.slot(_NEVER, (f, 0)), self.slot(_NEVER, (f, 1))
                if x == str(want):
                    self.lines.append(f"s[{hit}] = i")
                elif x not in LITERALS:
                    self.lines.append(f"if {x} is {want}: s[{hit}] = i")
                if self.skind(f, self.kind[x]) == "b":
                    return f"(s[{hit}] >= i - {n}) is {want}", "b"
                if x == "None":
                    self.lines.append(f"s[{unk}] = i")
                elif x not in LITERALS:
                    self.lines.append(f"elif {x} is None: s[{unk}] = i")
                return (
                    f"({want} if s[{hit}] >= i - {n} else "
                    f"(None if s[{unk}] >= i - {n} else {not want}))"
                ), "k"
        raise ValueError(f"not a future-free formula: {f!r}")

    def build(self, params: str, label: str) -> tuple[StepFn, list[Any]]:
        """Compile the lines as ``def step(<params>)``; the function and the initial state."""
        self.lines = prune(self.lines)
        src = f"def step({params}):\n" + "\n".join("    " + ln for ln in self.lines) + "\n"
        ns: dict[str, Any] = dict(self.consts)
        exec(compile(src, f"<guard {label:.60}>", "exec"), ns)
        return ns["step"], list(self.init)


_PURE = re.compile(r"([a-z]\w*) = (.*)")  # a top-level assignment to one local
_WORD = re.compile(r"[A-Za-z_]\w*")


def prune(lines: list[str]) -> list[str]:
    """Drop the assignments to locals that nothing reads (every emitted right-hand side
    of a one-target assignment is free of side effects), until none is left."""
    while True:
        uses = Counter(_WORD.findall("\n".join(lines)))
        keep = []
        for ln in lines:
            m = _PURE.fullmatch(ln)
            if m and " = " not in m.group(2) and ";" not in ln and uses[m.group(1)] == 1:
                continue
            keep.append(ln)
        if len(keep) == len(lines):
            return keep
        lines = keep


class PastFormula:
    """A compiled future-free formula: ``step(valuation)`` gives its value at the new event.

    ``state`` is the whole memory (a short list); copy it to roll back.
    """

    def __init__(
        self,
        formula: Formula,
        index: Mapping[Any, int] | None = None,
        kinds: Mapping[Any, str] | None = None,
    ) -> None:
        if not is_future_free(formula):
            raise ValueError("PastFormula needs a future-free formula")
        c = Compiler(index, kinds)
        c.lines.append("i = s[0]; s[0] = i + 1")
        out = c.emit(formula)
        c.lines.append(f"return {out}")
        self.formula = formula
        self._fn, self._init = c.build("v, s", repr(formula))
        self.state: list[Any] = list(self._init)

    def step(self, valuation: Any) -> K:
        """The value at the event just appended; ``valuation`` is a mapping atom → value,
        or the list of values in ``index`` order when the formula was compiled with one."""
        return self._fn(valuation, self.state)

    def reset(self) -> None:
        """Back to the empty trace."""
        self.state = list(self._init)
