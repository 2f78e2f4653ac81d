"""Columnar evaluation: formulas over many traces at once (SEMANTICS.md §2–§4.1).

The entry point of the batch evaluator. ``check_formula`` turns the
row values of ``values.Evaluator`` into what ``reference.check``
returns, for every trace at once: the Kleene value at the trace start
and, for violated traces, the kind, blame, offending positions and the
opened obligation.

Blame without a per-event loop: for ``G ψ`` with ψ future-free every row
where ψ is false is offending (§4.1), found in one pass. For other shapes
``blame`` computes the first bad prefix by a "bad time" scan;
shapes it does not cover go to the monitor (or the reference) on the
violated traces only, which are few (ARCHITECTURE.md "Evaluating fast").

Formulas are evaluated in negation normal form, which has the same Kleene
values (De Morgan holds in Kleene logic) and is what the blame scan needs.
A top-level G, F, ∧, ∨ is reduced per trace instead of scanned, since a
check only needs the value at each trace's first row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sponsio_audit.ltl import reference
from sponsio_audit.ltl.ast import Always, And, Atom, Eventually, Formula, Or, atoms, is_future_free
from sponsio_audit.ltl.columnar import scans as ops
from sponsio_audit.ltl.columnar import sparse, windows
from sponsio_audit.ltl.columnar.blame import BlameScan, Unsupported
from sponsio_audit.ltl.columnar.scans import Segments
from sponsio_audit.ltl.columnar.values import ColumnLike, Evaluator, at_end
from sponsio_audit.ltl.contract import Checker
from sponsio_audit.ltl.nnf import nnf
from sponsio_audit.vocab import KINDS

KIND_NAMES = KINDS[:2]
"""Codes of ``Checks.kind``: 0 guarantee, 1 liveness, −1 none."""


def default_checker() -> Checker:
    """The incremental monitor when it is available, else the reference evaluator."""
    try:
        from sponsio_audit.ltl.monitor import monitor_check
    except ImportError:  # pragma: no cover - a tree without the monitor
        return reference.check
    return monitor_check


# ---------------------------------------------------------------- checks


@dataclass(frozen=True, eq=False)
class Checks:
    """``reference.check`` of one formula on every segment, as arrays.

    ``value``: 1 true, 0 false, −1 unknown. ``kind``: index into
    KIND_NAMES or −1. ``blame``/``opened``: positions in the trace, −1 for
    none. Offending positions of segment s are
    ``off_pos[off_ptr[s]:off_ptr[s + 1]]``.
    """

    value: npt.NDArray[np.int8]
    kind: npt.NDArray[np.int8]
    blame: npt.NDArray[np.int64]
    opened: npt.NDArray[np.int64]
    off_ptr: npt.NDArray[np.int64]
    off_pos: npt.NDArray[np.int64]

    def check(self, s: int) -> reference.Check:
        """Segment s as a ``reference.Check``."""
        value = {1: True, 0: False, -1: None}[int(self.value[s])]
        kind = KIND_NAMES[self.kind[s]] if self.kind[s] >= 0 else None
        return reference.Check(
            value,
            kind,
            None if self.blame[s] < 0 else int(self.blame[s]),
            tuple(int(x) for x in self.off_pos[self.off_ptr[s] : self.off_ptr[s + 1]]),
            None if self.opened[s] < 0 else int(self.opened[s]),
        )


def start_values(ev: Evaluator, f: Formula) -> npt.NDArray[np.int8]:
    """σ, 0 ⊨ f per segment: 1 true, 0 false, −1 unknown (``f`` in NNF or not)."""
    s = ev.s
    out = np.full(s.n_segments, _code(at_end(f)), dtype=np.int8)
    hi, lo = _start_bounds(ev, f)
    out[s.lengths > 0] = np.where(lo, 1, np.where(hi, -1, 0))
    return out


def _start_bounds(ev: Evaluator, f: Formula) -> tuple[ops.BoolArray, ops.BoolArray]:
    """(hi, lo) of ``f`` at the first row of every non-empty segment.

    A top-level G or F is a per-segment reduction of its argument (one
    sparse pass), not a scan over every row: that is all a check needs.
    """
    match f:
        case Always(a):
            return _reduce(ev, a, _seg_all)
        case Eventually(a):
            return _reduce(ev, a, _seg_any)
        case And(a, b):
            (ha, la), (hb, lb) = _start_bounds(ev, a), _start_bounds(ev, b)
            return ha & hb, la & lb
        case Or(a, b):
            (ha, la), (hb, lb) = _start_bounds(ev, a), _start_bounds(ev, b)
            return ha | hb, la | lb
    col = ev.values(f)
    rows = ev.s.first_rows()
    return col.hi[rows], col.lo[rows]


def _reduce(
    ev: Evaluator, a: Formula, red: Callable[[Segments, ops.BoolArray], ops.BoolArray]
) -> tuple[ops.BoolArray, ops.BoolArray]:
    col = ev.values(a)
    hi = red(ev.s, col.hi)
    return hi, hi if col.is_exact else red(ev.s, col.lo)


def _seg_all(s: Segments, x: ops.BoolArray) -> ops.BoolArray:
    """Per non-empty segment: x holds on every row."""
    firsts = s.first_rows()
    if not len(firsts):
        return np.zeros(0, dtype=bool)
    return np.logical_and.reduceat(x, firsts)


def _seg_any(s: Segments, x: ops.BoolArray) -> ops.BoolArray:
    """Per non-empty segment: x holds on some row."""
    return ~_seg_all(s, ~x)


def _code(v: reference.K) -> int:
    return -1 if v is None else int(v)


def check_formula(ev: Evaluator, f: Formula, checker: Checker | None = None) -> Checks:
    """Value, kind, blame, offending and opened of ``f`` on every segment (§4.1).

    ``checker`` (default: the monitor) runs only on violated traces, and only
    when ``f`` has a shape the bad-time scan does not cover.
    """
    g = nnf(f)
    if isinstance(f, Always) and isinstance(g, Always):  # G(p → F[a,b] q) from p's, q's rows
        within = windows.g_within(ev, g)
        if within is not None:
            return Checks(*within)
    past = isinstance(f, Always) and isinstance(g, Always) and is_future_free(f.arg)
    # G(p → ψ): ψ only at the rows where p may hold
    got = sparse.g_past(ev, g) if isinstance(g, Always) and past else None
    value = start_values(ev, g) if got is None else got[0]
    if not (value == 0).any():
        n = ev.s.n_segments
        none = np.full(n, -1, dtype=np.int64)
        return Checks(value, none.astype(np.int8), none, none, np.zeros(n + 1, np.int64), _EMPTY)
    if past and isinstance(g, Always):
        false = np.flatnonzero(~ev.values(g.arg).hi) if got is None else got[1]
        return _g_past(ev, value, false)
    try:
        return _scanned(ev, g, value, isinstance(f, Always))
    except Unsupported:
        return _fallback(ev, f, value, checker or default_checker())


def _g_past(ev: Evaluator, value: npt.NDArray[np.int8], rows: npt.NDArray[np.int64]) -> Checks:
    """``G ψ``, ψ future-free: every row where ψ is false (``rows``) is offending, the
    first is blamed."""
    s = ev.s
    violated = value == 0
    ptr = np.searchsorted(rows, np.append(s.first, s.n_rows)).astype(np.int64)
    pos = rows - np.repeat(s.first, np.diff(ptr))
    kind = np.where(violated, 0, -1).astype(np.int8)
    blame = np.full(s.n_segments, -1, dtype=np.int64)
    blame[violated] = pos[ptr[:-1][violated]]
    return Checks(value, kind, blame, np.full(s.n_segments, -1, np.int64), ptr, pos)


def _scanned(ev: Evaluator, g: Formula, value: npt.NDArray[np.int8], always: bool) -> Checks:
    """Blame from the first bad prefix (``blame``); liveness when there is none.

    ``always``: the formula as written is ``G ψ``, so a liveness violation
    names the first row where ψ is false as the obligation left open.
    """
    s = ev.s
    violated = value == 0
    bt = BlameScan(ev).at_starts(g)[violated]  # raises Unsupported before any work is kept
    vs = np.flatnonzero(violated)
    has_bad = bt < s.n_rows
    kind = np.full(s.n_segments, -1, dtype=np.int8)
    blame = np.full(s.n_segments, -1, dtype=np.int64)
    opened = np.full(s.n_segments, -1, dtype=np.int64)
    kind[vs] = np.where(has_bad, 0, 1)
    blame[vs] = np.where(has_bad, bt - s.first[vs], s.lengths[vs] - 1)
    if always:
        assert isinstance(g, Always)
        live = vs[~has_bad & (s.lengths[vs] > 0)]
        false_rows = np.append(np.flatnonzero(~ev.values(g.arg).hi), s.n_rows)
        o = false_rows[np.searchsorted(false_rows, s.first[live])]  # first false row ≥ start
        opened[live] = np.where(o < s.first[live] + s.lengths[live], o - s.first[live], -1)
    ptr = np.zeros(s.n_segments + 1, dtype=np.int64)
    np.cumsum(blame >= 0, out=ptr[1:])
    return Checks(value, kind, blame, opened, ptr, blame[blame >= 0])


_EMPTY = np.zeros(0, dtype=np.int64)


def _fallback(ev: Evaluator, f: Formula, value: np.ndarray, checker: Checker) -> Checks:
    """Kind and blame by a per-trace checker, run on the violated traces only."""
    n_seg = ev.s.n_segments
    kind = np.full(n_seg, -1, dtype=np.int8)
    blame = np.full(n_seg, -1, dtype=np.int64)
    opened = np.full(n_seg, -1, dtype=np.int64)
    counts = np.zeros(n_seg, dtype=np.int64)
    offending: list[tuple[int, ...]] = []
    names = atoms(f)
    for sg in np.flatnonzero(value == 0).tolist():
        c = checker(f, ev.valuations(sg, names))
        if c.value is not False:
            raise RuntimeError(f"checker disagrees on segment {sg}: {c.value!r} for {f!r}")
        kind[sg] = KIND_NAMES.index(c.kind) if c.kind else -1
        blame[sg] = -1 if c.blame is None else c.blame
        opened[sg] = -1 if c.opened is None else c.opened
        counts[sg] = len(c.offending)
        offending.append(c.offending)
    ptr = np.zeros(n_seg + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    pos = np.array([p for o in offending for p in o], dtype=np.int64)
    return Checks(value, kind, blame, opened, ptr, pos)


def check_traces(
    f: Formula,
    segments: Segments,
    columns: Mapping[Atom, ColumnLike],
    checker: Checker | None = None,
) -> Checks:
    """``check_formula`` on a fresh evaluator (one formula, many traces)."""
    return check_formula(Evaluator(segments, columns), f, checker)
