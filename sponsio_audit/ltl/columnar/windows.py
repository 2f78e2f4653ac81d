"""``G(p → F[a,b] q)`` and ``G(p → F q)`` (``deadline``, ``always_followed_by``) from the
true rows of p and q alone.

When the columns know the rows where p and q hold and neither is ever
unknown (``Evaluator.true_rows``: one tool's calls each), the check needs
no scan of the view: at each p row i, F[a,b] q holds when the first q row
at or after i + a lies at or before min(i + b, end of i's trace), F q when
some q row lies in [i, end] (SEMANTICS.md §3). The result is what ``checks`` gives by the whole-view
path, field for field (§4.1): G is violated where some p row fails; its
bad time is i + b when that window lies wholly in the trace (the earliest
is blamed, kind guarantee), else the trace is a liveness violation blamed
at its last event with the first failing p row as the obligation opened.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from sponsio_audit.ltl.ast import Always, Atom, Eventually, EventuallyWithin, Formula, Not, Or
from sponsio_audit.ltl.columnar.segments import IntArray
from sponsio_audit.ltl.columnar.values import Evaluator

Checked = tuple[npt.NDArray[np.int8], npt.NDArray[np.int8], IntArray, IntArray, IntArray, IntArray]
"""(value, kind, blame, opened, off_ptr, off_pos), as ``checks.Checks`` holds them."""


def _shape(g: Always) -> tuple[Formula, int, int | None, Formula] | None:
    """(p, a, b, q) of ``G(¬p ∨ F[a,b] q)`` or ``G(¬p ∨ F q)`` (b None) in NNF,
    0 ≤ a ≤ b, p and q atoms; else None."""
    match g.arg:
        case Or(Not(Atom() as p), EventuallyWithin(a, b, Atom() as q)) | Or(
            EventuallyWithin(a, b, Atom() as q), Not(Atom() as p)
        ):
            return (p, a, b, q) if 0 <= a <= b else None
        case Or(Not(Atom() as p), Eventually(Atom() as q)) | Or(
            Eventually(Atom() as q), Not(Atom() as p)
        ):
            return p, 0, None, q
    return None


def g_within(ev: Evaluator, g: Always) -> Checked | None:
    """The checks of ``G(p → F[a,b] q)`` from p's and q's true rows; None when the
    formula has another shape or the columns do not know those rows."""
    shape = _shape(g)
    if shape is None:
        return None
    p, a, b, q = shape
    p_rows, q_rows = ev.true_rows(p), ev.true_rows(q)
    if p_rows is None or q_rows is None:
        return None
    s = ev.s
    n_s = s.n_segments
    seg = np.searchsorted(s.first, p_rows, side="right") - 1  # p's segments (none empty)
    end = np.take(s.first + s.lengths - 1, seg)
    j = np.searchsorted(q_rows, p_rows + a)
    nxt = np.take(q_rows, np.minimum(j, len(q_rows) - 1)) if len(q_rows) else p_rows
    upper = end if b is None else np.minimum(p_rows + b, end)
    ok = (j < len(q_rows)) & (nxt <= upper)
    fail, fail_seg = p_rows[~ok], seg[~ok]
    value = np.ones(n_s, dtype=np.int8)  # G holds on an empty trace
    value[fail_seg] = 0
    kind = np.full(n_s, -1, dtype=np.int8)
    blame = np.full(n_s, -1, dtype=np.int64)
    opened = np.full(n_s, -1, dtype=np.int64)
    if len(fail):
        violated = np.flatnonzero(value == 0)
        first = np.searchsorted(fail_seg, violated)  # each violated trace's first failure
        if b is None:  # F q is never false on a prefix: a liveness violation
            bad_at = np.full(len(fail), s.n_rows, dtype=np.int64)
        else:  # bad once the window lies wholly in the trace
            done = fail + b <= np.take(end, np.flatnonzero(~ok))
            bad_at = np.where(done, fail + b, s.n_rows)
        bad = np.minimum.reduceat(bad_at, first)
        has_bad = bad < s.n_rows
        kind[violated] = np.where(has_bad, 0, 1)
        start = s.first[violated]
        blame[violated] = np.where(has_bad, bad - start, s.lengths[violated] - 1)
        opened[violated] = np.where(has_bad, -1, fail[first] - start)
    ptr = np.zeros(n_s + 1, dtype=np.int64)
    np.cumsum(blame >= 0, out=ptr[1:])
    return value, kind, blame, opened, ptr, blame[blame >= 0]
