"""``G ψ`` with ψ future-free, evaluated only at the rows where ψ can fail (SEMANTICS.md §4.1).

A pattern guarantee is mostly ``G(p → ψ)``: in NNF ``G(¬p ∨ ψ)``, which is
certainly true at every row where p is certainly false. ``candidates``
finds, from cheap literals only (atoms, their negations, Y/Z of them),
a row mask outside of which ψ is certainly true: ∨ keeps the rows both
sides may fail, ∧ the rows either side may. ``at_rows`` then gives ψ's
Kleene value at those rows alone: connectives and comparisons sample
their atoms at the rows (``Evaluator.sample``), Y/Z read the row before,
O/H/O[k]/H[k] find the last row of their argument with a binary search
in its (full-view) column, and anything else is computed over the whole
view and sampled, so every value is exactly the one ``Evaluator.values``
gives. Past operators and counters still see every row of the view: only
the evaluation of ψ is restricted, never what ψ reads.
"""

from __future__ import annotations

import numpy as np

from sponsio_audit.ltl.ast import (
    Always,
    And,
    Atom,
    Bool,
    Cmp,
    Formula,
    Historically,
    HistoricallyWithin,
    Implies,
    Not,
    Once,
    OnceWithin,
    Or,
    WeakYesterday,
    Yesterday,
)
from sponsio_audit.ltl.columnar import scans as ops
from sponsio_audit.ltl.columnar.scans import KCol
from sponsio_audit.ltl.columnar.segments import BoolArray, IntArray, Segments
from sponsio_audit.ltl.columnar.values import Evaluator

DENSE = 0.5
"""Above this share of candidate rows the whole-view path is as cheap: use it."""

SHORT_WINDOW = 8
"""O[k] with k up to this reads the k + 1 rows back directly instead of searching."""


def _cheap(f: Formula) -> bool:
    """A literal whose whole-view column costs one comparison or shift."""
    match f:
        case Atom() | Bool():
            return True
        case Not(a) | Yesterday(a) | WeakYesterday(a):
            return _cheap(a)
    return False


def candidates(ev: Evaluator, f: Formula) -> BoolArray | None:
    """Rows where ``f`` may not be certainly true (a superset), None when unknown."""
    match f:
        case Or(a, b):
            ca, cb = candidates(ev, a), candidates(ev, b)
            if ca is None or cb is None:
                return cb if ca is None else ca
            return ca & cb
        case And(a, b):
            ca, cb = candidates(ev, a), candidates(ev, b)
            return None if ca is None or cb is None else ca | cb
        case Implies(a, b):
            return candidates(ev, Or(Not(a), b))
    if _cheap(f):
        return ~ev.values(f).lo
    return None


def segment_of(s: Segments, rows: IntArray) -> IntArray:
    """The segment of each row."""
    return np.take(s.seg, rows)


def at_rows(ev: Evaluator, f: Formula, rows: IntArray, start: IntArray) -> KCol:
    """σ, i ⊨ f at ``rows`` (sorted view rows; ``start``: each one's segment start)."""
    known = ev.memo.get(f)
    if known is not None:
        return _take(known, rows)

    def v(g: Formula) -> KCol:
        return at_rows(ev, g, rows, start)

    match f:
        case Bool(b):
            return KCol.exact(np.full(len(rows), b, dtype=bool))
        case Atom():
            return ev.atom_at(f, rows)
        case Cmp(op, left, right):
            return ev.cmp_at(op, left, right, rows)
        case Not(a):
            return ops.k_not(v(a))
        case And(a, b):
            return ops.lift2(ops.and_, ev.s, v(a), v(b))
        case Or(a, b):
            return ops.lift2(ops.or_, ev.s, v(a), v(b))
        case Implies(a, b):
            return ops.lift2(ops.or_, ev.s, ops.k_not(v(a)), v(b))
        case Yesterday(a) | WeakYesterday(a):
            return _before(ev, a, rows, start, isinstance(f, WeakYesterday))
        case Once(a):
            return _last(ev.values(a), rows, start, None)
        case Historically(a):
            return ops.k_not(_last(ops.k_not(ev.values(a)), rows, start, None))
        case OnceWithin(k, a):
            return _last(ev.values(a), rows, start, k)
        case HistoricallyWithin(k, a):
            return ops.k_not(_last(ops.k_not(ev.values(a)), rows, start, k))
    return _take(ev.values(f), rows)


def _take(col: KCol, rows: IntArray) -> KCol:
    if col.is_exact:
        return KCol.exact(col.hi[rows])
    return KCol(col.hi[rows], col.lo[rows])


def _before(ev: Evaluator, a: Formula, rows: IntArray, start: IntArray, weak: bool) -> KCol:
    """Y a (false at a trace's first row) or Z a (true there), at ``rows``."""
    inside = rows > start
    prev = rows[inside] - 1
    got = at_rows(ev, a, prev, start[inside])
    out = []
    for bound in (got.hi, got.lo) if not got.is_exact else (got.hi,):
        x = np.full(len(rows), weak, dtype=bool)
        x[inside] = bound
        out.append(x)
    return KCol.exact(out[0]) if len(out) == 1 else KCol(out[0], out[1])


def _last(col: KCol, rows: IntArray, start: IntArray, k: int | None) -> KCol:
    """O a (k None) or O[k] a at ``rows``: the last row ≤ i where a holds lies in
    [start, i] (or [max(start, i − k), i])."""
    if k is not None and k < 0:
        return KCol.exact(np.zeros(len(rows), dtype=bool))

    def once(x: BoolArray) -> BoolArray:
        if k is not None and k <= SHORT_WINDOW:
            return _near(x, rows, start, k)
        return _searched(x, rows, start if k is None else np.maximum(start, rows - k))

    if col.is_exact:
        return KCol.exact(once(col.hi))
    return KCol(once(col.hi), once(col.lo))


def _searched(x: BoolArray, rows: IntArray, lo_bound: IntArray) -> BoolArray:
    """Some row of ``x`` in [lo_bound, i] at each row i of ``rows`` (binary search)."""
    hits = np.flatnonzero(x)
    if not len(hits):
        return np.zeros(len(rows), bool)
    j = np.searchsorted(hits, rows, side="right") - 1
    return (j >= 0) & (hits[np.maximum(j, 0)] >= lo_bound)


def _near(x: BoolArray, rows: IntArray, start: IntArray, k: int) -> BoolArray:
    """Some row of ``x`` in [max(start, i − k), i] at each row i of ``rows``: k + 1
    direct reads per row, no search (short windows)."""
    out = np.take(x, rows)
    for d in range(1, k + 1):
        back = rows - d
        out |= (back >= start) & np.take(x, np.maximum(back, 0))
    return out


def g_past(ev: Evaluator, g: Always) -> tuple[np.ndarray, IntArray] | None:
    """``G ψ`` (NNF, ψ future-free) per segment from the candidate rows only: the codes
    of ``start_values`` and the rows where ψ is false; None when the candidates are not
    known or not sparse (the whole-view path is then used)."""
    s = ev.s
    cand = candidates(ev, g.arg)
    if cand is None:
        return None
    rows = np.flatnonzero(cand)
    if len(rows) > DENSE * s.n_rows:
        return None
    segs = segment_of(s, rows)  # one gather from the view's rows; starts from the segments
    col = at_rows(ev, g.arg, rows, np.take(s.first, segs))
    value = np.ones(s.n_segments, dtype=np.int8)  # G holds on an empty trace
    value[segs[~col.lo]] = -1
    value[segs[~col.hi]] = 0
    return value, rows[~col.hi]
