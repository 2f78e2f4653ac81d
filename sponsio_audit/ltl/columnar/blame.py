"""First bad prefix for every trace at once (SEMANTICS.md §4.1), by a "bad time" scan.

For an NNF formula φ and a row j, the *bad time* ``bt[j]`` is the first
prefix end k (a row of j's trace, k ≥ j) at which φ at j is already false
with the future left open; ``n_rows`` stands for never. Open-future
values only decrease as the prefix grows (the NNF is monotone and the
open future is the top value), so once false φ stays false, and the
first bad prefix of a trace is ``bt`` at its first row.

Bad times compose without looking at prefixes one by one:

- a future-free sub-formula is exact at every j ≤ k: ``bt[j] = j`` where
  it is false;
- ∧ is false as soon as one side is (min), ∨ when both are (max);
- ``X a``/``N a`` at j < end is a at j + 1; at the end it stays open;
- ``F a`` never becomes false on a prefix (liveness);
- ``G a`` is the suffix minimum of a's bad times within the trace;
- ``F[lo,hi] a`` is false once its whole window is known and every
  position of it is false: max(j + hi, window maximum);
- ``G[lo,hi] a`` is the window minimum;
- ``a U b``, ``a W b``, ``a R b`` with future-free operands: the first ¬a
  with no b up to it, and the first ¬b with no a before it.

Anything else (past operators over future formulas, U/R over future
operands) raises ``Unsupported`` and the caller runs the monitor on the
violated traces.

Invariant: every finite ``bt[j]`` lies in [j, end of j's trace]; that is
what lets the scans run over all traces without segment bookkeeping (a
value found in a later trace is larger than this trace's end, so it is
read as "never").
"""

from __future__ import annotations

import numpy as np

from sponsio_audit.ltl.ast import (
    Always,
    AlwaysWithin,
    And,
    Eventually,
    EventuallyWithin,
    Formula,
    Next,
    Or,
    Release,
    StrongNext,
    Until,
    WeakUntil,
    is_future_free,
)
from sponsio_audit.ltl.columnar import scans as ops
from sponsio_audit.ltl.columnar.segments import BoolArray, IntArray
from sponsio_audit.ltl.columnar.values import Evaluator


class Unsupported(Exception):
    """The formula has a shape the bad-time scan does not cover."""


class BlameScan:
    """Bad times of NNF formulas over an evaluator's rows, memoised."""

    def __init__(self, ev: Evaluator) -> None:
        self.ev = ev
        self.s = ev.s
        self.never = self.s.n_rows
        self.memo: dict[Formula, IntArray] = {}

    def bad_time(self, f: Formula) -> IntArray:
        """``bt`` of ``f`` (in NNF) at every row."""
        got = self.memo.get(f)
        if got is None:
            got = self._node(f)
            self.memo[f] = got
        return got

    def at_starts(self, f: Formula) -> IntArray:
        """``bt`` of ``f`` at the first row of every segment (never for empty ones).

        For a top-level ``G a`` that is the minimum of a's bad times over the
        segment: one reduction instead of a suffix scan.
        """
        s = self.s
        out = np.full(s.n_segments, self.never, dtype=np.int64)
        nonempty = s.lengths > 0
        if isinstance(f, Always):
            if s.n_rows:
                out[nonempty] = np.minimum.reduceat(self.bad_time(f.arg), s.first[nonempty])
        else:
            out[nonempty] = self.bad_time(f)[s.first[nonempty]]
        return out

    def _node(self, f: Formula) -> IntArray:
        if is_future_free(f):
            return self._exact(f)
        match f:
            case And(a, b) | Or(a, b) if is_future_free(a) or is_future_free(b):
                return self._with_exact(f)
            case And(a, b):
                return np.minimum(self.bad_time(a), self.bad_time(b))
            case Or(a, b):
                return np.maximum(self.bad_time(a), self.bad_time(b))
            case Next(a) | StrongNext(a):
                return self._next(a)
            case Eventually():
                return np.full(self.s.n_rows, self.never, dtype=np.int64)
            case Always(a):
                return self._clip(ops.rev_min(self.bad_time(a)))
            case EventuallyWithin(lo, hi, a):
                return self._eventually_within(lo, hi, a)
            case AlwaysWithin(lo, hi, a):
                return self._always_within(lo, hi, a)
            case Until(a, b) | WeakUntil(a, b) if is_future_free(a) and is_future_free(b):
                return self._until(self._hi(a), self._hi(b))
            case Release(a, b) if is_future_free(a) and is_future_free(b):
                return self._release(self._hi(a), self._hi(b))
        raise Unsupported(f)

    def _hi(self, f: Formula) -> BoolArray:
        """Rows where ``f`` is not false (true or unknown)."""
        return self.ev.values(f).hi

    def _clip(self, bt: IntArray) -> IntArray:
        """Read bad times that fall beyond the row's trace as never."""
        return np.where(bt <= self.s.end, bt, self.never)

    def _exact(self, f: Formula) -> IntArray:
        """Future-free: false at j already on the prefix ending at j."""
        return np.where(self._hi(f), self.never, self.s.idx)

    def _with_exact(self, f: And | Or) -> IntArray:
        """∧/∨ with a future-free side x: one pass, as every bad time at j is ≥ j.

        min(x's bt, other) is other where x is not false, else j; max(…) is
        never where x is not false, else other.
        """
        x, other = (f.left, f.right) if is_future_free(f.left) else (f.right, f.left)
        hi, bt = self._hi(x), self.bad_time(other)
        if isinstance(f, And):
            return np.where(hi, bt, self.s.idx)
        return np.where(hi, self.never, bt)

    def _next(self, a: Formula) -> IntArray:
        """X a / N a: a's bad time at j + 1; the last row stays open."""
        bt = self.bad_time(a)
        out = np.empty_like(bt)
        out[:-1] = bt[1:]
        out[self.s.last_rows()] = self.never
        return out

    def _eventually_within(self, lo: int, hi: int, a: Formula) -> IntArray:
        """F[lo,hi] a: false once the window is complete and all of it is false."""
        s = self.s
        if lo <= hi and is_future_free(a):
            return self._eventually_within_exact(lo, hi, self._hi(a))
        if lo > hi:
            worst = np.full(s.n_rows, -1, dtype=np.int64)
        else:
            win = ops.window_reduce(self.bad_time(a), hi - lo + 1, np.maximum, self.never)
            worst = ops.shifted(win, lo, self.never)
        done = s.idx + hi
        return np.where(done <= s.end, np.maximum(done, worst), self.never)

    def _eventually_within_exact(self, lo: int, hi: int, x: BoolArray) -> IntArray:
        """F[lo,hi] x, x future-free: bad at j + hi when the window lies in the trace
        and x is false all over it (window counts from one cumulative sum)."""
        s, n = self.s, self.s.n_rows
        cs = ops.cum_count(x, pad=hi + 1)  # cs[k]: rows of x before k (flat past n)
        done = s.idx + hi
        none = cs[hi + 1 : hi + 1 + n] == cs[lo : lo + n]
        return np.where(none & (done <= s.end), done, self.never)

    def _always_within(self, lo: int, hi: int, a: Formula) -> IntArray:
        """G[lo,hi] a: false at the first bad time in the window."""
        s = self.s
        if lo > hi:
            return np.full(s.n_rows, self.never, dtype=np.int64)
        win = ops.window_reduce(self.bad_time(a), hi - lo + 1, np.minimum, self.never)
        return self._clip(ops.shifted(win, lo, self.never))

    def _until(self, a: BoolArray, b: BoolArray) -> IntArray:
        """a U b (and a W b, equal on open prefixes): the first ¬a, if no b up to it."""
        q = ops.next_true(self.s, ~a)
        ok = (q <= self.s.end) & (ops.next_true(self.s, b) > q)
        return np.where(ok, q, self.never)

    def _release(self, a: BoolArray, b: BoolArray) -> IntArray:
        """a R b: the first ¬b, if no a strictly before it."""
        m = ops.next_true(self.s, ~b)
        ok = (m <= self.s.end) & (ops.next_true(self.s, a) >= m)
        return np.where(ok, m, self.never)
