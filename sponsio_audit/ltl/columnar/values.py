"""Kleene values of formulas at every row of many traces (SEMANTICS.md §2–§3).

``Evaluator`` computes σ, i ⊨ φ for every sub-formula φ and every row i of
a segmented table (``scans``), from grounded atom columns: one
``value`` array and one ``unknown`` mask per atom, as ``atoms.columnar``
produces them. Each node kind is one small case that lifts one segmented
scan; results are memoised per sub-formula, so contracts evaluated on one
evaluator share their common sub-formulas.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    column with the same codes) instead of the values. A column with a method
    ``at(rows) -> (value, unknown)`` (``atoms.deferred``) is grounded at the rows
    sampled only, never whole.
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


@dataclass(frozen=True, eq=False)
class Coded:
    """An atom, or an ∧/∨/¬ of atoms, read from one lookup table over shared codes:
    ``lut[codes]``, with the unknown mask of ``leaf`` (every atom of it has that mask,
    ``unknown`` its id, None when no row is unknown). Kleene ∧/∨/¬ over one unknown
    mask are the Boolean ones on the values, so the tables combine exactly: an
    allowlist of fifty tools is one lookup, not fifty columns."""

    codes: np.ndarray
    lut: np.ndarray
    unknown: int | None
    leaf: Atom


def coded_parts(c: ColumnLike, known: bool) -> tuple[np.ndarray, np.ndarray, int | None] | None:
    """``(codes, lut, id of the unknown mask)`` of a coded column (the id None when
    ``known``: no row is unknown), None for an uncoded or deferred one (``Coded``)."""
    coded = getattr(c, "coded", None)
    if coded is None or getattr(c, "at", None) is not None:
        return None
    return coded[0], coded[1], None if known else id(c.unknown)


# ---------------------------------------------------------------- values


class Evaluator:
    """Kleene values of formulas at every row, memoised per sub-formula."""

    def __init__(self, segments: Segments, columns: Mapping[Atom, ColumnLike]) -> None:
        self.s = segments
        self.columns = columns
        self.memo: dict[Formula, KCol] = {}
        self._coded: dict[Formula, Coded | None] = {}

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
            case And() | Or() if (c := self.coded(f)) is not None:
                return self._looked_up(c)
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

    def coded(self, f: Formula) -> Coded | None:
        """``f`` as one lookup table when it is an atom, or an ∧/∨/¬ of atoms, whose
        columns share their codes and unknown mask (``TakenColumns.coded_of``); else None."""
        if f in self._coded:
            return self._coded[f]
        got: Coded | None = None
        match f:
            case Atom():
                try:
                    found = self._coded_of(f)
                except KeyError:  # not grounded: the plain path says so
                    found = None
                if found is not None:
                    got = Coded(found[0], found[1], found[2], f)
            case Not(a):
                c = self.coded(a)
                if c is not None:
                    got = Coded(c.codes, ~c.lut, c.unknown, c.leaf)
            case And(a, b) | Or(a, b):
                ca, cb = self.coded(a), self.coded(b)
                if (
                    ca is not None
                    and cb is not None
                    and ca.codes is cb.codes
                    and ca.unknown == cb.unknown
                    and len(ca.lut) == len(cb.lut)
                ):
                    lut = ca.lut & cb.lut if isinstance(f, And) else ca.lut | cb.lut
                    got = Coded(ca.codes, lut, ca.unknown, ca.leaf)
        self._coded[f] = got
        return got

    def _coded_of(self, a: Atom) -> tuple[np.ndarray, np.ndarray, int | None] | None:
        """(codes, lut, id of the unknown mask or None) of a coded column at the rows:
        from ``TakenColumns``, or from the grounded columns themselves when they are the
        view's rows (a plain dict, ``view_columns``); None otherwise."""
        find = getattr(self.columns, "coded_of", None)
        if find is not None:
            got: tuple[np.ndarray, np.ndarray, int | None] | None = find(a)
            return got
        if self.columns.__class__ is not dict:  # e.g. a ChainMap over taken columns
            return None
        c = self.columns[a]
        return coded_parts(c, c.unknown is None or not c.unknown.any())

    def _looked_up(self, c: Coded) -> KCol:
        """A ``coded`` formula at every row: one lookup, the leaf's unknown mask."""
        lookup = getattr(self.columns, "lookup", None)
        value = lookup(c.codes, c.lut) if lookup is not None else np.take(c.lut, c.codes)
        return KCol.of(value, None if c.unknown is None else self.column(c.leaf).unknown)

    def coded_at(self, c: Coded, rows: npt.NDArray[np.int64]) -> KCol:
        """``_looked_up`` at some rows only."""
        sample = getattr(self.columns, "sample_lookup", None)
        if sample is not None:
            value = sample(c.codes, c.lut, rows)
        else:
            value = np.take(c.lut, np.take(c.codes, rows))
        return KCol.of(value, None if c.unknown is None else self.sample(c.leaf, rows).unknown)

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
        return compare_terms(op, left, right, self.column, self.s.n_rows)

    def sample(self, a: Atom, rows: npt.NDArray[np.int64]) -> ColumnLike:
        """Atom ``a`` at some rows only (``TakenColumns`` takes them from the grounded
        column without sampling the whole view)."""
        at = getattr(self.columns, "sample", None)
        if at is not None:
            try:
                got: ColumnLike = at(a, rows)
            except KeyError:
                raise KeyError(f"atom {a!r} was not grounded") from None
            return got
        c = self.column(a)
        unknown = None if c.unknown is None else np.take(c.unknown, rows)
        return Col(np.take(c.value, rows), unknown)

    def true_rows(self, f: Formula) -> npt.NDArray[np.int64] | None:
        """Sorted rows where ``f`` is true when it is an atom whose columns can say so
        without a scan (``TakenColumns.true_rows``); else None."""
        get = getattr(self.columns, "true_rows", None)
        if get is None or not isinstance(f, Atom):
            return None
        try:
            got: npt.NDArray[np.int64] | None = get(f)
        except KeyError:
            raise KeyError(f"atom {f!r} was not grounded") from None
        return got

    def atom_at(self, a: Atom, rows: npt.NDArray[np.int64]) -> KCol:
        """``_atom`` at some rows only."""
        col = self.sample(a, rows)
        value = col.value if col.value.dtype == bool else col.value != 0
        return KCol.of(value, col.unknown)

    def cmp_at(self, op: str, left: Term, right: Term, rows: npt.NDArray[np.int64]) -> KCol:
        """``_cmp`` at some rows only."""
        return compare_terms(op, left, right, lambda a: self.sample(a, rows), len(rows))

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


def compare_terms(
    op: str, left: Term, right: Term, column: Callable[[Atom], ColumnLike], n: int
) -> KCol:
    """``left op right`` over ``n`` rows with reference.compare's rules (atoms from
    ``column``)."""
    lv, lu, lk = _term(left, column)
    rv, ru, rk = _term(right, column)
    res: Any
    unknown = lu if ru is None else ru if lu is None else lu | ru
    if "any" in (lk, rk):  # a value atom (object column): reference.compare row by row
        got = _compare_any(op, lv, rv)
        value = np.broadcast_to(_IS_TRUE(got).astype(bool), (n,))
        none = np.broadcast_to(_IS_NONE(got).astype(bool), (n,))
        unknown = none if unknown is None else unknown | none
        return KCol.of(np.array(value), unknown)
    if not isinstance(lv, np.ndarray) and not isinstance(rv, np.ndarray):
        res = reference.compare(op, lv, rv)
    elif lk != rk:
        if "num" not in (lk, rk) and op not in ("==", "!="):
            raise TypeError(f"cannot order {left!r} and {right!r}")
        if op not in ("==", "!="):  # a number and a string have no order: unknown
            return KCol.of(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
        res = op == "!="  # numbers and non-numbers are never equal
    else:
        res = _COMPARE[op](lv, rv)
    if res is None:  # two constants with no order between them
        return KCol.of(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    value = np.broadcast_to(np.asarray(res, dtype=bool), (n,))
    return KCol.of(np.array(value), unknown)


_IS_TRUE = np.frompyfunc(lambda x: x is True, 1, 1)
_IS_NONE = np.frompyfunc(lambda x: x is None, 1, 1)


def _compare_any(op: str, left: Any, right: Any) -> Any:
    """``reference.compare`` over (arrays of) Python values: an object array of True,
    False and None (unknown)."""
    fn = np.frompyfunc(lambda a, b: reference.compare(op, a, b), 2, 1)
    a = left.astype(object) if isinstance(left, np.ndarray) else left
    b = right.astype(object) if isinstance(right, np.ndarray) else right
    return np.asarray(fn(a, b), dtype=object)


def _term(t: Term, column: Callable[[Atom], ColumnLike]) -> tuple[Any, np.ndarray | None, str]:
    """A comparison operand: (values, unknown mask or None, "num" | "str" | "bool" | "any");
    "any" is a value atom's object column (``arg_value``, ``ctx_value``)."""
    match t:
        case Num(x):
            return x, None, "num"
        case Str(x):
            return x, None, "str"
        case Atom():
            col = column(t)
            kind = col.value.dtype.kind
            return (
                col.value,
                col.unknown,
                "bool" if kind == "b" else "any" if kind == "O" else "num",
            )
    raise TypeError(f"not a term: {t!r}")


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
