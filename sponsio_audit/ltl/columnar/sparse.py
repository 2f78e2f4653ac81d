"""``G ψ`` with ψ future-free, evaluated only at the rows where ψ can fail (SEMANTICS.md §4.1).

A pattern guarantee is mostly ``G(p → ψ)``: in NNF ``G(¬p ∨ ψ)``, which is
certainly true at every row where p is certainly false. ``candidate_rows``
finds, from literals only (atoms, comparisons, their negations, Y/Z of
atoms), the rows outside of which ψ is certainly true: ∨ keeps the rows
both sides may fail, and looks at its second side only at the first
side's rows (so ψ's own literals are sampled only where p may hold, never
taken over the whole view); ∧ keeps the rows either side may. ``at_rows`` then gives ψ's
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

NARROW = 0.25
"""Candidates among more than this share of the view's rows read a cheap literal's
whole-view column rather than sampling it."""

SHORT_WINDOW = 8
"""O[k] with k up to this reads the k + 1 rows back directly instead of searching."""


def _cheap(ev: Evaluator, f: Formula) -> bool:
    """A literal whose whole-view column costs one comparison or shift."""
    match f:
        case Atom() | Bool():
            return True
        case And() | Or():
            return ev.coded(f) is not None
        case Not(a) | Yesterday(a) | WeakYesterday(a):
            return _cheap(ev, a)
    return False


def _literal(ev: Evaluator, f: Formula) -> bool:
    """An atom or a comparison, negated or not, or atoms read from one lookup table
    (``Evaluator.coded``): candidates cost one sample of its rows."""
    match f:
        case Not(a):
            return _literal(ev, a)
        case And() | Or():
            return ev.coded(f) is not None
    return isinstance(f, (Atom, Bool, Cmp))


def candidate_rows(ev: Evaluator, f: Formula) -> IntArray | None:
    """Sorted view rows where ``f`` may not be certainly true (a superset); None when
    unknown (``_candidates`` as rows)."""
    got = _candidates(ev, f, None)
    if got is None or got.dtype != bool:
        return got
    return np.flatnonzero(got)


Rows = np.ndarray
"""A set of view rows: a mask over the view (dense sets) or sorted row numbers (sparse)."""


def _candidates(ev: Evaluator, f: Formula, within: IntArray | None) -> Rows | None:
    """The rows, among ``within`` (every row when None), where ``f`` may not be
    certainly true (a superset); None when unknown.

    ∨ keeps the rows both sides may fail; when its first side's rows are few, the
    second side is looked at only there (``G(p → ψ)``: ψ's literals only where p may
    hold). ∧ keeps the rows either side may fail.
    """
    n = ev.s.n_rows
    match f:
        case And() | Or() if ev.coded(f) is not None:
            pass  # one lookup table: a literal (below)
        case Or(a, b):
            if not _cheap(ev, a) and _cheap(ev, b):  # the cheap side first: it may narrow the other
                a, b = b, a
            ra = _candidates(ev, a, within)
            if ra is None:
                return _candidates(ev, b, within)
            if ra.dtype == bool and np.count_nonzero(ra) <= NARROW * n:
                ra = np.flatnonzero(ra)
            if ra.dtype != bool and not len(ra):
                return ra
            if ra.dtype != bool:  # b among a's few rows only
                rb = _candidates(ev, b, ra)
                return ra if rb is None else rb
            rb = _candidates(ev, b, within)
            return ra if rb is None else _intersect(ra, rb)
        case And(a, b):
            ra = _candidates(ev, a, within)
            rb = None if ra is None else _candidates(ev, b, within)
            return None if ra is None or rb is None else _union(ra, rb, n)
        case Implies(a, b):
            return _candidates(ev, Or(Not(a), b), within)
    if within is None and (known := _known_rows(ev, f)) is not None:
        return known
    if _cheap(ev, f) and (within is None or f in ev.memo or len(within) > NARROW * n):
        lo = ev.values(f).lo  # the whole-view column is as cheap
        return ~lo if within is None else within[~lo[within]]
    literal = _literal(ev, f)
    if within is not None and (literal or _cheap(ev, f)):
        start = np.take(ev.s.first, segment_of(ev.s, within)) if not literal else within
        return within[~at_rows(ev, f, within, start).lo]
    return None


def _known_rows(ev: Evaluator, f: Formula) -> IntArray | None:
    """The candidates of ``¬a`` or ``Z ¬a`` (NNF of ¬Y a) as rows, for an atom a whose
    true rows the columns know (``Evaluator.true_rows``: one tool's calls) and few:
    where a (Y a) holds; None otherwise."""
    match f:
        case Not(Atom() as a):
            rows = ev.true_rows(a)
        case WeakYesterday(Not(Atom() as a)):
            hits = ev.true_rows(a)
            if hits is None:
                return None
            first = np.zeros(ev.s.n_rows + 1, dtype=bool)  # Y a is false at a trace's start
            first[ev.s.first] = True
            first[ev.s.n_rows] = True
            after = hits + 1
            rows = after[~first[after]]
        case _:
            return None
    return None if rows is None or len(rows) > NARROW * ev.s.n_rows else rows


def _intersect(a: Rows, b: Rows) -> Rows:
    """Rows in both sets."""
    if a.dtype == bool:
        return a & b if b.dtype == bool else b[a[b]]
    return a[b[a]] if b.dtype == bool else np.intersect1d(a, b, assume_unique=True)


def _union(a: Rows, b: Rows, n: int) -> Rows:
    """Rows in either set (a mask unless both are few)."""
    if a.dtype != bool and b.dtype != bool and len(a) + len(b) < n // 32:
        both = np.sort(np.concatenate([a, b]))  # np.union1d hashes: slower
        keep = np.ones(len(both), dtype=bool)
        np.not_equal(both[1:], both[:-1], out=keep[1:])
        return both[keep]
    mask = np.zeros(n, dtype=bool)
    for x in (a, b):
        if x.dtype == bool:
            mask |= x
        else:
            mask[x] = True
    return mask


def candidates(ev: Evaluator, f: Formula) -> BoolArray | None:
    """``candidate_rows`` as a mask over the view, None when unknown."""
    got = _candidates(ev, f, None)
    if got is None or got.dtype == bool:
        return got
    mask = np.zeros(ev.s.n_rows, dtype=bool)
    mask[got] = True
    return mask


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
        case And() | Or() if (c := ev.coded(f)) is not None:
            return ev.coded_at(c, rows)
        case And(a, b):
            return ops.lift2(ops.and_, ev.s, v(a), v(b))
        case Or(a, b):
            return ops.lift2(ops.or_, ev.s, v(a), v(b))
        case Implies(a, b):
            return ops.lift2(ops.or_, ev.s, ops.k_not(v(a)), v(b))
        case Yesterday(a) | WeakYesterday(a):
            return _before(ev, a, rows, start, isinstance(f, WeakYesterday))
        case Once(a):
            return _once(ev, a, rows, start, None)
        case Historically(Not(b)):  # H ¬b = ¬O b (NNF of ¬O b)
            return ops.k_not(_once(ev, b, rows, start, None))
        case Historically(a):
            return ops.k_not(_last(ops.k_not(ev.values(a)), rows, start, None))
        case OnceWithin(k, a):
            return _once(ev, a, rows, start, k)
        case HistoricallyWithin(k, Not(b)):
            return ops.k_not(_once(ev, b, rows, start, k))
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


def _once(ev: Evaluator, a: Formula, rows: IntArray, start: IntArray, k: int | None) -> KCol:
    """O a / O[k] a at ``rows``: searched among a's true rows when the columns know them
    (no scan of a's column), else ``_last``."""
    if k is None or k > SHORT_WINDOW:
        hits = ev.true_rows(a)
        if hits is not None:
            bound = start if k is None else np.maximum(start, rows - k)
            return KCol.exact(_found(hits, rows, bound))
    return _last(ev.values(a), rows, start, k)


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
    return _found(np.flatnonzero(x), rows, lo_bound)


def _found(hits: IntArray, rows: IntArray, lo_bound: IntArray) -> BoolArray:
    """Some of the sorted ``hits`` in [lo_bound, i] at each row i of ``rows``."""
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
    rows = candidate_rows(ev, g.arg)
    if rows is None or len(rows) > DENSE * s.n_rows:
        return None
    segs = segment_of(s, rows)  # one gather from the view's rows; starts from the segments
    col = at_rows(ev, g.arg, rows, np.take(s.first, segs))
    value = np.ones(s.n_segments, dtype=np.int8)  # G holds on an empty trace
    value[segs[~col.lo]] = -1
    value[segs[~col.hi]] = 0
    return value, rows[~col.hi]
