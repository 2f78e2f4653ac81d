"""Kleene values of formulas at every row of many traces (SEMANTICS.md §2–§3).

``Evaluator`` computes σ, i ⊨ φ for every sub-formula φ and every row i of
a segmented table (``scans``), from grounded atom columns: one
``value`` array and one ``unknown`` mask per atom, as ``atoms.columnar``
produces them. Each node kind is one small case that lifts one segmented
scan; results are memoised per sub-formula, so contracts evaluated on one
evaluator share their common sub-formulas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sponsio_audit.ltl import reference
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
)
from sponsio_audit.ltl.columnar import scans as ops
from sponsio_audit.ltl.columnar.scans import KCol
from sponsio_audit.ltl.columnar.segments import Segments


class ColumnLike(Protocol):
    """A grounded atom column (``atoms.columnar.Column``): values plus an unknown mask.

    A bool column may also carry ``coded = (codes, lut)`` with ``value ==
    lut[codes]``: it is then sampled by taking the codes (shared by every
    column with the same codes) instead of the values.
    """

    @property
    def value(self) -> np.ndarray: ...

    @property
    def unknown(self) -> np.ndarray: ...


@dataclass(frozen=True)
class Col:
    """A plain ``ColumnLike`` (rows taken from a grounded column, test tables)."""

    value: np.ndarray
    unknown: np.ndarray


class TakenColumns(Mapping[Atom, ColumnLike]):
    """``columns`` restricted to ``rows``, each column taken on first use and kept."""

    def __init__(self, columns: Mapping[Atom, ColumnLike], rows: npt.NDArray[np.int64]) -> None:
        self.base = columns
        self.rows = rows
        self.taken: dict[Atom, ColumnLike] = {}
        self.codes: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __getitem__(self, a: Atom) -> ColumnLike:
        got = self.taken.get(a)
        if got is None:
            c = self.base[a]
            known = c.unknown is None or not c.unknown.any()
            unknown = np.zeros(len(self.rows), bool) if known else np.take(c.unknown, self.rows)
            coded = getattr(c, "coded", None)
            value = self._lookup(*coded) if coded is not None else np.take(c.value, self.rows)
            got = Col(value, unknown)
            self.taken[a] = got
        return got

    def _lookup(self, codes: np.ndarray, lut: np.ndarray) -> np.ndarray:
        """``lut[codes]`` at the rows, the codes taken once for all columns sharing them."""
        got = self.codes.get(id(codes))
        if got is None:
            got = (codes, np.take(codes, self.rows))  # keeps ``codes`` alive: ids stay unique
            self.codes[id(codes)] = got
        taken = got[1]
        hits = np.flatnonzero(lut)
        if len(hits) == 1:
            return np.asarray(taken == int(hits[0]))  # stays in the codes' dtype
        return np.take(lut, taken)

    def __iter__(self) -> Iterator[Atom]:
        return iter(self.base)

    def __len__(self) -> int:
        return len(self.base)


# ---------------------------------------------------------------- values


class Evaluator:
    """Kleene values of formulas at every row, memoised per sub-formula."""

    def __init__(self, segments: Segments, columns: Mapping[Atom, ColumnLike]) -> None:
        self.s = segments
        self.columns = columns
        self.memo: dict[Formula, KCol] = {}

    def values(self, f: Formula) -> KCol:
        """σ, i ⊨ f at every row i (positions past a trace's end are never needed)."""
        got = self.memo.get(f)
        if got is None:
            got = self._node(f)
            self.memo[f] = got
        return got

    def _node(self, f: Formula) -> KCol:
        s, v = self.s, self.values
        match f:
            case Bool(b):
                return KCol.exact(np.full(s.n_rows, b, dtype=bool))
            case Atom():
                return self._atom(f)
            case Cmp(op, left, right):
                return self._cmp(op, left, right)
            case Not(a):
                return ops.k_not(v(a))
            case And(a, b):
                return ops.lift2(ops.and_, s, v(a), v(b))
            case Or(a, b):
                return ops.lift2(ops.or_, s, v(a), v(b))
            case Implies(a, b):
                return ops.lift2(ops.or_, s, ops.k_not(v(a)), v(b))
            case Next(a):
                return ops.lift1(ops.next_, s, v(a))
            case StrongNext(a):
                return ops.lift1(ops.strong_next, s, v(a))
            case Eventually(a):
                return ops.lift1(ops.eventually, s, v(a))
            case Always(a):
                return ops.lift1(ops.always, s, v(a))
            case Until(a, b):
                return ops.lift2(ops.until, s, v(a), v(b))
            case WeakUntil(a, b):
                return ops.lift2(ops.weak_until, s, v(a), v(b))
            case Release(a, b):
                return ops.lift2(ops.release, s, v(a), v(b))
            case Yesterday(a):
                return ops.lift1(ops.yesterday, s, v(a))
            case WeakYesterday(a):
                return ops.lift1(ops.weak_yesterday, s, v(a))
            case Once(a):
                return ops.lift1(ops.once, s, v(a))
            case Historically(a):
                return ops.lift1(ops.historically, s, v(a))
            case Since(a, b):
                return ops.lift2(ops.since, s, v(a), v(b))
            case Trigger(a, b):
                return ops.lift2(ops.trigger, s, v(a), v(b))
            case OnceWithin(k, a):
                return ops.lift1(lambda s, x: ops.once_within(k, s, x), s, v(a))
            case HistoricallyWithin(k, a):
                return ops.lift1(lambda s, x: ops.historically_within(k, s, x), s, v(a))
            case EventuallyWithin(lo, hi, a):
                return ops.lift1(lambda s, x: ops.eventually_within(lo, hi, s, x), s, v(a))
            case AlwaysWithin(lo, hi, a):
                return ops.lift1(lambda s, x: ops.always_within(lo, hi, s, x), s, v(a))
        raise TypeError(f"not a formula: {f!r}")

    def column(self, a: Atom) -> ColumnLike:
        try:
            return self.columns[a]
        except KeyError:
            raise KeyError(f"atom {a!r} was not grounded") from None

    def _atom(self, a: Atom) -> KCol:
        """An atom as a formula: its value (non-zero for numbers), unknown where masked."""
        col = self.column(a)
        value = col.value if col.value.dtype == bool else col.value != 0
        return KCol.of(value, col.unknown)

    def _cmp(self, op: str, left: Term, right: Term) -> KCol:
        """``left op right`` with reference.compare's rules, row by row."""
        lv, lu, lk = self._term(left)
        rv, ru, rk = self._term(right)
        res: Any
        if not isinstance(lv, np.ndarray) and not isinstance(rv, np.ndarray):
            res = reference.compare(op, lv, rv)
        elif lk != rk:
            if "num" not in (lk, rk) and op not in ("==", "!="):
                raise TypeError(f"cannot order {left!r} and {right!r}")
            res = op == "!="  # numbers and non-numbers are never equal (nor ordered)
        else:
            res = _COMPARE[op](lv, rv)
        value = np.broadcast_to(np.asarray(res, dtype=bool), (self.s.n_rows,))
        unknown = lu if ru is None else ru if lu is None else lu | ru
        return KCol.of(np.array(value), unknown)

    def _term(self, t: Term) -> tuple[Any, np.ndarray | None, str]:
        """A comparison operand: (values, unknown mask or None, "num" | "str" | "bool")."""
        match t:
            case Num(x):
                return x, None, "num"
            case Str(x):
                return x, None, "str"
            case Atom():
                col = self.column(t)
                return col.value, col.unknown, "bool" if col.value.dtype == bool else "num"
        raise TypeError(f"not a term: {t!r}")

    def valuations(self, segment: int, atoms: list[Atom]) -> list[dict[Atom, reference.Value]]:
        """One trace as the reference's grounded trace (for the per-trace fallback)."""
        lo = int(self.s.first[segment])
        hi = lo + int(self.s.lengths[segment])
        cols = []
        for a in atoms:
            c = self.column(a)
            vals = c.value[lo:hi].tolist()
            unk = c.unknown[lo:hi].tolist() if c.unknown is not None else [False] * (hi - lo)
            cols.append([None if u else x for x, u in zip(vals, unk, strict=True)])
        if not atoms:
            return [{} for _ in range(hi - lo)]
        return [dict(zip(atoms, row, strict=True)) for row in zip(*cols, strict=True)]


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: np.equal(a, b),
    "!=": lambda a, b: np.not_equal(a, b),
    "<=": lambda a, b: np.less_equal(a, b),
    "<": lambda a, b: np.less(a, b),
    ">=": lambda a, b: np.greater_equal(a, b),
    ">": lambda a, b: np.greater(a, b),
}


def at_end(f: Formula) -> reference.K:
    """σ, n ⊨ f at the empty suffix: the value of ``f`` on an empty trace."""
    match f:
        case Bool(b):
            return b
        case Atom() | Cmp() | Eventually() | Until() | Yesterday() | EventuallyWithin():
            return False
        case StrongNext():
            return False
        case Next() | Always() | WeakUntil() | Release() | WeakYesterday() | AlwaysWithin():
            return True
        case Not(a):
            return reference.k_not(at_end(a))
        case And(a, b):
            return reference.k_and(at_end(a), at_end(b))
        case Or(a, b):
            return reference.k_or(at_end(a), at_end(b))
        case Implies(a, b):
            return reference.k_or(reference.k_not(at_end(a)), at_end(b))
        case Once(a) | Historically(a) | OnceWithin(_, a) | HistoricallyWithin(_, a):
            return at_end(a)
        case Since(_, b) | Trigger(_, b):
            return at_end(b)
    raise TypeError(f"not a formula: {f!r}")
