"""Segmented scans: the operators of SEMANTICS.md §3 over many traces at once.

Rows are the events of many traces laid end to end, sorted by trace then
position; a ``Segments`` value says where each trace (segment) starts and
ends. Every temporal operator is a whole-array NumPy expression over those
rows (ARCHITECTURE.md "Evaluating fast"): past operators scan forwards
(``maximum.accumulate`` of the last index where something held), future
operators scan backwards (``minimum.accumulate`` of the next index), and a
result is kept only when the index found lies inside the row's own segment.
There is no Python loop per event or per trace.

Kleene values (§2) are carried as a ``KCol``: two boolean arrays, ``hi``
("possibly true": true or unknown) and ``lo`` ("certainly true"). Every
positive connective and temporal operator is monotone, and for monotone
operators built from ∧ and ∨ Kleene's strong logic is exactly interval
arithmetic: apply the Boolean operator to ``hi`` and to ``lo`` separately.
Negation swaps the bounds (¬ of [lo, hi] is [¬hi, ¬lo]). So each operator
is written once, as a Boolean scan, and lifted. When a column has no
unknowns ``hi is lo`` and the scan runs once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sponsio_audit.ltl.columnar.segments import BoolArray, IntArray, Segments

# ---------------------------------------------------------------- Kleene columns


@dataclass(frozen=True, eq=False)
class KCol:
    """A Kleene column: ``hi`` = possibly true, ``lo`` = certainly true (lo ⊆ hi)."""

    hi: BoolArray
    lo: BoolArray

    @classmethod
    def exact(cls, x: BoolArray) -> KCol:
        """A column without unknowns."""
        return cls(x, x)

    @classmethod
    def of(cls, value: BoolArray, unknown: BoolArray | None) -> KCol:
        """From a Boolean value and an unknown mask (shared bounds when nothing is unknown)."""
        if unknown is None or not unknown.any():
            return cls.exact(value)
        return cls(value | unknown, value & ~unknown)

    @property
    def is_exact(self) -> bool:
        return self.hi is self.lo


UnaryScan = Callable[[Segments, BoolArray], BoolArray]
BinaryScan = Callable[[Segments, BoolArray, BoolArray], BoolArray]


def k_not(x: KCol) -> KCol:
    """Kleene negation: the bounds swap and flip."""
    if x.is_exact:
        return KCol.exact(~x.hi)
    return KCol(~x.lo, ~x.hi)


def lift1(op: UnaryScan, s: Segments, x: KCol) -> KCol:
    """Apply a monotone Boolean scan to both bounds."""
    if x.is_exact:
        return KCol.exact(op(s, x.hi))
    return KCol(op(s, x.hi), op(s, x.lo))


def lift2(op: BinaryScan, s: Segments, a: KCol, b: KCol) -> KCol:
    """Apply a monotone binary Boolean scan to both bounds."""
    if a.is_exact and b.is_exact:
        return KCol.exact(op(s, a.hi, b.hi))
    return KCol(op(s, a.hi, b.hi), op(s, a.lo, b.lo))


# ---------------------------------------------------------------- index scans


def last_true(s: Segments, x: BoolArray) -> IntArray:
    """For each row, the last row ≤ it where x holds (−1 if none; may lie in an earlier trace)."""
    return np.maximum.accumulate(np.where(x, s.idx, -1))


def next_true(s: Segments, x: BoolArray) -> IntArray:
    """For each row, the first row ≥ it where x holds (n_rows if none; may lie in a later trace)."""
    r = np.where(x, s.idx, s.n_rows)[::-1]
    np.minimum.accumulate(r, out=r)
    return r[::-1]


def rev_min(x: IntArray) -> IntArray:
    """Suffix minimum: out[i] = min(x[i:])."""
    r = x[::-1].copy()
    np.minimum.accumulate(r, out=r)
    return r[::-1]


def window_reduce(x: IntArray, width: int, op: np.ufunc, fill: int) -> IntArray:
    """out[i] = op over x[i : i + width] (positions past the end count as ``fill``).

    Sparse-table doubling: r_2s[i] = op(r_s[i], r_s[i + s]) until s reaches
    the largest power of two ≤ width, then one more op of two overlapping
    windows (op is idempotent: max or min). log2(width) + 1 array passes.
    """
    n = len(x)
    if width <= 0:
        return np.full(n, fill, dtype=x.dtype)
    r, span = x, 1
    while span * 2 <= width:
        r, span = _pair(r, span, op, fill), span * 2
    return r if span == width else _pair(r, width - span, op, fill)


def shifted(x: IntArray, k: int, fill: int) -> IntArray:
    """out[i] = x[i + k], ``fill`` past the end."""
    n = len(x)
    out = np.full(n, fill, dtype=x.dtype)
    if k < n:
        out[: n - k] = x[k:]
    return out


def _pair(r: IntArray, k: int, op: np.ufunc, fill: int) -> IntArray:
    """op(r[i], r[i + k]), with r past the end read as ``fill``."""
    out: IntArray = op(r, shifted(r, k, fill))
    return out


# ---------------------------------------------------------------- Boolean scans


def and_(s: Segments, a: BoolArray, b: BoolArray) -> BoolArray:
    return a & b


def or_(s: Segments, a: BoolArray, b: BoolArray) -> BoolArray:
    return a | b


def next_(s: Segments, x: BoolArray) -> BoolArray:
    """``X x``: x at the next row; true at the last row of a trace (weak)."""
    r = np.empty_like(x)
    r[:-1] = x[1:]
    r[s.last_rows()] = True
    return r


def strong_next(s: Segments, x: BoolArray) -> BoolArray:
    """``N x``: x at the next row; false at the last row of a trace."""
    r = np.empty_like(x)
    r[:-1] = x[1:]
    r[s.last_rows()] = False
    return r


def yesterday(s: Segments, x: BoolArray) -> BoolArray:
    """``Y x``: x at the previous row; false at the first row of a trace."""
    r = np.empty_like(x)
    r[1:] = x[:-1]
    r[s.first_rows()] = False
    return r


def weak_yesterday(s: Segments, x: BoolArray) -> BoolArray:
    """``Z x``: x at the previous row; true at the first row of a trace."""
    r = np.empty_like(x)
    r[1:] = x[:-1]
    r[s.first_rows()] = True
    return r


def cum_count(x: BoolArray, pad: int = 0) -> npt.NDArray[np.signedinteger]:
    """cs[k] = rows of x before k, for k in [0, n + pad] (flat past the end)."""
    n = len(x)
    cs = np.empty(n + 1 + pad, dtype=np.int32 if n < 2**31 else np.int64)
    cs[0] = 0
    np.cumsum(x, out=cs[1 : n + 1])
    cs[n + 1 :] = cs[n]
    return cs


def _per_row(s: Segments, cs: npt.NDArray[np.signedinteger], at_end: bool) -> np.ndarray:
    """cs at each row's trace start (or just past its trace end), spread to the rows."""
    nz = s.lengths > 0
    bound = s.first + s.lengths if at_end else s.first
    return np.repeat(cs[bound[nz]], s.lengths[nz])


def _counts(s: Segments, x: BoolArray, past: bool) -> npt.NDArray[np.signedinteger]:
    """Per row i: the x rows in [start, i] (``past``) or in [i, end] of i's trace."""
    cs = cum_count(x)
    if past:
        return cs[1:] - _per_row(s, cs, False)
    return _per_row(s, cs, True) - cs[:-1]


def once(s: Segments, x: BoolArray) -> BoolArray:
    """``O x``: some x at or before the row in its trace."""
    return _counts(s, x, True) > 0


def historically(s: Segments, x: BoolArray) -> BoolArray:
    """``H x``: no ¬x at or before the row in its trace."""
    return _counts(s, ~x, True) == 0


def eventually(s: Segments, x: BoolArray) -> BoolArray:
    """``F x``: some x at or after the row in its trace."""
    return _counts(s, x, False) > 0


def always(s: Segments, x: BoolArray) -> BoolArray:
    """``G x``: no ¬x at or after the row in its trace."""
    return _counts(s, ~x, False) == 0


def since(s: Segments, a: BoolArray, b: BoolArray) -> BoolArray:
    """``a S b``: the last b lies in the trace and no ¬a came after it."""
    lb = last_true(s, b)
    return (lb >= s.start) & (lb >= last_true(s, ~a))


def trigger(s: Segments, a: BoolArray, b: BoolArray) -> BoolArray:
    """``a T b`` = ¬(¬a S ¬b)."""
    return ~since(s, ~a, ~b)


def until(s: Segments, a: BoolArray, b: BoolArray) -> BoolArray:
    """``a U b``: the next b lies in the trace and no ¬a comes before it."""
    nb = next_true(s, b)
    return (nb <= s.end) & (nb <= next_true(s, ~a))


def weak_until(s: Segments, a: BoolArray, b: BoolArray) -> BoolArray:
    """``a W b``: no ¬a in the rest of the trace, or a b no later than the first ¬a."""
    na = next_true(s, ~a)
    return (na > s.end) | (next_true(s, b) <= na)


def release(s: Segments, a: BoolArray, b: BoolArray) -> BoolArray:
    """``a R b`` = ¬(¬a U ¬b)."""
    return ~until(s, ~a, ~b)


def once_within(k: int, s: Segments, x: BoolArray) -> BoolArray:
    """``O[k] x``: some x in [max(start, i − k), i].

    By counts: cs[i + 1] > cs[max(start, i − k)] = max(cs[start], cs[i − k]), as
    cs is non-decreasing.
    """
    n = len(x)
    if k < 0:
        return np.zeros(n, dtype=bool)
    cs = cum_count(x)
    lo = np.zeros(n, dtype=cs.dtype)  # cs[max(i − k, 0)]
    if k < n:
        lo[k:] = cs[: n - k]
    return cs[1:] > np.maximum(lo, _per_row(s, cs, False))


def historically_within(k: int, s: Segments, x: BoolArray) -> BoolArray:
    """``H[k] x`` = ¬O[k]¬x."""
    return ~once_within(k, s, ~x)


def eventually_within(a: int, b: int, s: Segments, x: BoolArray) -> BoolArray:
    """``F[a,b] x``: some x in [i + a, min(i + b, end)].

    By counts: min(cs[i + b + 1], cs[end + 1]) > cs[i + a]; when i + a lies past
    the end, cs[i + a] ≥ cs[end + 1] makes it false, as it should be.
    """
    n = len(x)
    if a > b:
        return np.zeros(n, dtype=bool)
    if a < 0:
        at = shifted(next_true(s, x), a, s.n_rows)
        return (at <= s.idx + b) & (at <= s.end)
    cs = cum_count(x, pad=b + 1)
    upper = np.minimum(cs[b + 1 : b + 1 + n], _per_row(s, cs, True))
    return upper > cs[a : a + n]


def always_within(a: int, b: int, s: Segments, x: BoolArray) -> BoolArray:
    """``G[a,b] x`` = ¬F[a,b]¬x."""
    return ~eventually_within(a, b, s, ~x)
