"""Incremental monitor (SEMANTICS.md §4.1): one event in, the prefix value out.

The formula is put in negation normal form and compiled to one step
function per sub-formula, children first. A step computes every node's
*residual* at the current position i: what its value at i still depends
on, as an obligation on the positions after i. A residual is a Kleene
constant (True, False, None) or a positive formula over *leaves*, kept in
DNF with absorption so that it stays small. A leaf is a pending obligation
at the next position: "node c there" (for G F U W R, and the argument of
X / N) or a window "F[lo,hi] c" / "G[lo,hi] c". Past nodes keep their last
residual (O[k] / H[k] a window of them) and progress it each step, so past
operators over future arguments work too; over past-only arguments the
state is a handful of constants.

The prefix value reads the open future (every leaf true, as the reference
does); ``finish`` reads "the trace ends here" (each leaf's end value).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sponsio_audit.ltl import ast as L
from sponsio_audit.ltl.nnf import nnf
from sponsio_audit.ltl.reference import Check, K, Trace, Valuation, Value, compare, k_and, k_or
from sponsio_audit.ltl.residuals import UNKNOWN_LEAF, Dnf, Res, open_value, r_and, r_or
from sponsio_audit.vocab import GUARANTEE, LIVENESS

Prog = Callable[[Res], Res]
Join = Callable[[Res, Res], Res]
Pairs = tuple[tuple[Res, int], ...]
"""Residuals with a position each: an O[k] / H[k] window, or the open ψ instances of G ψ."""
Step = Callable[[list[Res], list[Any], int, Valuation, Prog], Res]
"""A node's residual at i from (children's residuals, past states, i, event, progress)."""

_AT, _FW, _GW = range(3)  # leaf kinds: node at next position, F[lo,hi] / G[lo,hi] window
_MISSING = object()
_PAST_INIT: dict[type, object] = {
    L.Historically: True,
    L.Trigger: True,
    L.OnceWithin: (),
    L.HistoricallyWithin: (),
}


# ---------------------------------------------------------------- monitor


@dataclass(frozen=True)
class _State:
    """Everything a step changes; immutable, so rollback just keeps the old one."""

    pos: int = 0
    top: Res = True  # the formula's obligation on positions ≥ pos (unused at pos 0)
    value: K = True
    first_bad: int | None = None
    past: tuple[Any, ...] = ()  # per past node: its last residual, or a window
    offending: tuple[int, Any] | None = None  # cons list, newest first
    pending: Pairs = ()  # open instances of ψ in G ψ: residual, position
    opened: int | None = None  # first position where ψ of G ψ resolved false


class Monitor:
    """Online evaluation of one formula: ``step`` per event, ``finish`` at the end."""

    def __init__(self, formula: L.Formula) -> None:
        self.formula = formula
        order = L.subformulas(nnf(formula))
        index = {h: i for i, h in enumerate(order)}
        self._leaves: list[tuple[int, int, int, int, bool]] = []  # kind, node, lo, hi, end value
        self._leaf_ids: dict[tuple[int, int, int, int, bool], int] = {}
        self._leaf_dnf: list[Dnf] = []
        self._kids: list[tuple[int, ...]] = []
        self._steps: list[Step] = []
        past: list[Any] = []
        for i, h in enumerate(order):
            kids = tuple(index[c] for c in L.children(h))
            slot = -1
            if isinstance(h, L.PAST):
                slot = len(past)
                past.append(_PAST_INIT.get(type(h), False))
            self._kids.append(kids)
            a, b = (*kids, -1, -1)[:2]
            self._steps.append(self._compile(h, i, a, b, slot))
        self._empty = self._empty_value(order)
        is_g = isinstance(formula, L.Always)
        self._safety = isinstance(formula, L.Always) and L.is_future_free(formula.arg)
        self._psi = self._kids[-1][0] if is_g else -1  # ψ of a root G ψ
        self._state = _State(past=tuple(past))
        self._prev: _State | None = None

    @property
    def position(self) -> int:
        """Number of events consumed."""
        return self._state.pos

    @property
    def value(self) -> K:
        """Prefix value after the last event (True before any event)."""
        return self._state.value

    @property
    def first_bad(self) -> int | None:
        """The first position whose prefix is bad, or None."""
        return self._state.first_bad

    def step(self, valuation: Valuation) -> K:
        """Consume one grounded event; return the prefix value (False = bad prefix).

        An atom missing from ``valuation`` counts as unknown.
        """
        self._prev = self._state
        self._state = self._advance(self._state, valuation)
        return self._state.value

    def rollback(self) -> None:
        """Undo the last ``step`` (one level), e.g. when a guard blocks the event."""
        if self._prev is None:
            raise RuntimeError("nothing to roll back")
        self._state, self._prev = self._prev, None

    def finish(self) -> Check:
        """The verdict on the complete trace, as ``reference.check`` gives it."""
        st = self._state
        value = self._closed(st.top) if st.pos else self._empty
        if value is not False:
            return Check(value)
        if self._safety:
            offending: list[int] = []
            cell = st.offending
            while cell is not None:
                offending.append(cell[0])
                cell = cell[1]
            return Check(False, GUARANTEE, st.first_bad, tuple(reversed(offending)))
        if st.first_bad is not None:
            return Check(False, GUARANTEE, st.first_bad, (st.first_bad,))
        last = st.pos - 1 if st.pos else None
        opened = None
        if self._psi >= 0:
            found = [p for r, p in st.pending if self._closed(r) is False]
            opened = min([*found, *([] if st.opened is None else [st.opened])], default=None)
        return Check(False, LIVENESS, last, () if last is None else (last,), opened)

    # -- compiling ---------------------------------------------------------

    def _compile(self, h: L.Formula, me: int, a: int, b: int, slot: int) -> Step:
        """The step function of node ``h`` (index ``me``, children ``a``, ``b``)."""
        match h:
            case L.Bool(x):
                return lambda vs, ps, i, ev, pr: x
            case L.Atom():
                return lambda vs, ps, i, ev, pr: _kleene(ev.get(h))
            case L.Cmp(op, left, right):
                return lambda vs, ps, i, ev, pr: compare(op, _term(left, ev), _term(right, ev))
            case L.Not():  # NNF: the argument is an atom or comparison, so a constant
                return lambda vs, ps, i, ev, pr: None if vs[a] is None else not vs[a]
            case L.And() | L.Or():
                join = r_and if isinstance(h, L.And) else r_or
                return lambda vs, ps, i, ev, pr: join(vs[a], vs[b])
            case L.Next() | L.StrongNext():
                d = self._leaf(_AT, a, 0, 0, isinstance(h, L.Next))
                return lambda vs, ps, i, ev, pr: d
            case L.Eventually() | L.Always():
                d = self._leaf(_AT, me, 0, 0, isinstance(h, L.Always))
                join = r_and if isinstance(h, L.Always) else r_or
                return lambda vs, ps, i, ev, pr: join(vs[a], d)
            case L.Until() | L.WeakUntil():  # b ∨ (a ∧ again)
                d = self._leaf(_AT, me, 0, 0, isinstance(h, L.WeakUntil))
                return lambda vs, ps, i, ev, pr: r_or(vs[b], r_and(vs[a], d))
            case L.Release():  # b ∧ (a ∨ again)
                d = self._leaf(_AT, me, 0, 0, True)
                return lambda vs, ps, i, ev, pr: r_and(vs[b], r_or(vs[a], d))
            case L.EventuallyWithin(lo, hi, _) | L.AlwaysWithin(lo, hi, _):
                if not 0 <= lo <= hi:
                    raise ValueError(f"empty or negative window in {h!r}")
                kind = _FW if isinstance(h, L.EventuallyWithin) else _GW
                return lambda vs, ps, i, ev, pr: self._window(kind, a, lo, hi, vs)
            case L.Yesterday() | L.WeakYesterday():
                first = isinstance(h, L.WeakYesterday)
                return lambda vs, ps, i, ev, pr: _put(
                    ps, slot, first if i == 0 else pr(ps[slot]), vs[a]
                )
            case L.Once() | L.Historically():
                join = r_and if isinstance(h, L.Historically) else r_or
                return lambda vs, ps, i, ev, pr: _put(ps, slot, join(pr(ps[slot]), vs[a]))
            case L.Since() | L.Trigger():  # S: b ∨ (a ∧ before); T: b ∧ (a ∨ before)
                j1, j2 = (r_and, r_or) if isinstance(h, L.Trigger) else (r_or, r_and)
                return lambda vs, ps, i, ev, pr: _put(ps, slot, j1(vs[b], j2(vs[a], pr(ps[slot]))))
            case L.OnceWithin(k, _) | L.HistoricallyWithin(k, _):
                if k < 0:
                    raise ValueError(f"negative bound in {h!r}")
                unit = isinstance(h, L.HistoricallyWithin)
                join = r_and if unit else r_or
                return lambda vs, ps, i, ev, pr: _put(
                    ps, slot, *_bounded(ps[slot], vs[a], i, k, unit, join, pr)
                )
        raise TypeError(f"not in negation normal form: {h!r}")

    def _leaf(self, kind: int, node: int, lo: int, hi: int, end: bool) -> Dnf:
        """The residual that is just this (interned) leaf; ``end`` is its value at the end."""
        key = (kind, node, lo, hi, end)
        lid = self._leaf_ids.get(key)
        if lid is None:
            lid = self._leaf_ids[key] = len(self._leaves)
            self._leaves.append(key)
            self._leaf_dnf.append(frozenset([frozenset([lid])]))
        return self._leaf_dnf[lid]

    # -- stepping ----------------------------------------------------------

    def _advance(self, st: _State, val: Valuation) -> _State:
        i = st.pos
        vals: list[Res] = []
        past = list(st.past)
        memo: dict[Res, Res] = {}

        def prog(r: Res) -> Res:
            return self._progress(r, vals, memo)

        for fn in self._steps:
            vals.append(fn(vals, past, i, val, prog))
        top = vals[-1] if i == 0 else prog(st.top)
        value = open_value(top)
        first_bad = i if st.first_bad is None and value is False else st.first_bad
        offending, pending, opened = st.offending, st.pending, st.opened
        if self._safety and vals[self._psi] is False:
            offending = (i, offending)
        elif self._psi >= 0 and not self._safety:
            pending, opened = _instances(st, vals[self._psi], i, prog)
        return _State(i + 1, top, value, first_bad, tuple(past), offending, pending, opened)

    def _progress(self, r: Res, vals: list[Res], memo: dict[Res, Res]) -> Res:
        """Residual ``r`` (an obligation at this position) moved past this event."""
        if not isinstance(r, frozenset):
            return r
        if r in memo:
            return memo[r]
        out: Res = False
        for term in r:
            acc: Res = True
            for lid in term:
                acc = r_and(acc, None if lid == UNKNOWN_LEAF else self._leaf_now(lid, vals))
                if acc is False:
                    break
            out = r_or(out, acc)
            if out is True:
                break
        memo[r] = out
        return out

    def _leaf_now(self, lid: int, vals: list[Res]) -> Res:
        kind, node, lo, hi, _ = self._leaves[lid]
        return vals[node] if kind == _AT else self._window(kind, node, lo, hi, vals)

    def _window(self, kind: int, c: int, lo: int, hi: int, vals: list[Res]) -> Res:
        """``F[lo,hi] c`` (kind _FW) or ``G[lo,hi] c`` (_GW) at this position."""
        end = kind == _GW
        if lo > 0:
            return self._leaf(kind, c, lo - 1, hi - 1, end)
        rest: Res = self._leaf(kind, c, 0, hi - 1, end) if hi > 0 else end
        return r_and(vals[c], rest) if end else r_or(vals[c], rest)

    # -- end of trace ------------------------------------------------------

    def _closed(self, r: Res) -> K:
        """Value when the trace ends here: each leaf takes its end value."""
        if not isinstance(r, frozenset):
            return r
        out: K = False
        for term in r:
            acc: K = True
            for lid in term:
                acc = k_and(acc, None if lid == UNKNOWN_LEAF else self._leaves[lid][4])
            out = k_or(out, acc)
        return out

    def _empty_value(self, order: list[L.Formula]) -> K:
        """The formula on the empty trace (position n = 0, SEMANTICS.md §3)."""
        ev: list[K] = []
        for h, kids in zip(order, self._kids, strict=True):
            a, b = (*(ev[c] for c in kids), None, None)[:2]
            match h:
                case L.Bool(x):
                    v: K = x
                case L.Not():
                    v = None if a is None else not a
                case L.And() | L.Or():
                    v = k_and(a, b) if isinstance(h, L.And) else k_or(a, b)
                case L.Once() | L.Historically() | L.OnceWithin() | L.HistoricallyWithin():
                    v = a
                case L.Since() | L.Trigger():
                    v = b
                case L.Next() | L.Always() | L.WeakUntil() | L.Release() | L.AlwaysWithin():
                    v = True
                case L.WeakYesterday():
                    v = True
                case _:  # atoms, comparisons, N, F, U, Y, F[a,b]
                    v = False
            ev.append(v)
        return ev[-1]


# ---------------------------------------------------------------- helpers


def _kleene(raw: Value) -> K:
    return None if raw is None else bool(raw)


def _term(t: L.Term, val: Valuation) -> Value:
    match t:
        case L.Num(x) | L.Str(x):
            return x
        case L.Atom():
            return val.get(t)
    raise TypeError(f"not a term: {t!r}")


def _put(past: list[Any], slot: int, value: Res, state: object = _MISSING) -> Res:
    """Store a past node's new state (by default its value) and return its value."""
    past[slot] = value if state is _MISSING else state
    return value


def _bounded(
    window: Pairs, new: Res, i: int, k: int, unit: bool, join: Join, prog: Prog
) -> tuple[Res, Pairs]:
    """O[k] (join or, unit False) or H[k] (and, True) over the last k+1 residuals.

    Equal residuals behave alike, so only the latest position of each is kept:
    for a past-only argument that is the "last true / last unknown" counter.
    """
    merged: dict[Res, int] = {}
    for r, p in window:
        if p >= i - k:
            r2 = prog(r)
            if r2 is not unit and merged.get(r2, -1) < p:
                merged[r2] = p
    if new is not unit:
        merged[new] = i
    value: Res = unit
    for r in merged:
        value = join(value, r)
    return value, tuple(merged.items())


def _instances(st: _State, new: Res, i: int, prog: Prog) -> tuple[Pairs, int | None]:
    """Progress the open instances of ψ, for the liveness ``opened`` of G ψ.

    Instances with the same residual behave alike, so only the earliest is
    kept; once one resolves false, later positions cannot be the first.
    """
    opened = st.opened
    merged: dict[Res, int] = {}
    for r, p in st.pending:
        r2 = prog(r)
        if r2 is False:
            opened = p if opened is None else min(opened, p)
        elif isinstance(r2, frozenset) and merged.get(r2, i) > p:
            merged[r2] = p
    if opened is None:
        if new is False:
            opened = i
        elif isinstance(new, frozenset):
            merged.setdefault(new, i)
    return tuple((r, p) for r, p in merged.items() if opened is None or p < opened), opened


def monitor_check(formula: L.Formula, trace: Trace) -> Check:
    """``reference.check`` computed by one pass of a monitor over ``trace``."""
    m = Monitor(formula)
    for event in trace:
        m.step(event)
    return m.finish()
