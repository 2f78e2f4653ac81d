"""Contract verdicts for many traces at once (SEMANTICS.md §1 view, §4.2).

``atoms.view`` selects the rows a contract sees (its event types and
its agent) and lays them out as segments, one per trace (one per trace
and agent for ``per_agent`` contracts).
``contract_verdicts`` gives, for every segment and guarantee, exactly what
``contract.judge`` gives with the reference checker; ``evaluate_contracts``
runs many contracts and returns one Arrow table.

first_match activation is vectorised too: k* per trace is the latest of
the assumptions' first certainly-true rows (of φ for ``F φ``), and each
guarantee runs on the whole view as ``contract.at_activation`` rewrites it,
with the ``START`` column true at the row of k* (SEMANTICS.md §4.2).
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.columnar.checks import Checks, check_formula
from sponsio_audit.ltl.columnar.result import (
    ASSUMPTION,
    NOT_APPLICABLE,
    PASS,
    SKIPPED,
    UNVERIFIABLE,
    VIOLATED,
    ContractResult,
)
from sponsio_audit.ltl.columnar.segments import IntArray, Segments
from sponsio_audit.ltl.columnar.table import results_table
from sponsio_audit.ltl.columnar.values import Col, ColumnLike, Evaluator
from sponsio_audit.ltl.columnar.views import View, view_columns
from sponsio_audit.ltl.contract import (
    NEVER,
    START,
    UNDECIDED,
    Checker,
    Contract,
    at_activation,
    trigger,
)
from sponsio_audit.ltl.nnf import nnf
from sponsio_audit.threads import ordered_map

# ---------------------------------------------------------------- verdicts


def first_true(s: Segments, x: npt.NDArray[np.bool_]) -> IntArray:
    """Per segment, the position of its first row where x holds, −1 if none."""
    rows = np.append(np.flatnonzero(x), s.n_rows)
    cand = rows[np.searchsorted(rows, s.first)]
    return np.where(cand < s.first + s.lengths, cand - s.first, -1)


def activation(ev: Evaluator, contract: Contract) -> IntArray:
    """k* per segment for first_match (``contract.activation``: ``NEVER`` where some
    assumption is false everywhere, else ``UNDECIDED`` where one is unknown before it
    first holds, or unknown and never true)."""
    k = np.zeros(ev.s.n_segments, dtype=np.int64)
    never = np.zeros(ev.s.n_segments, dtype=bool)
    undecided = np.zeros(ev.s.n_segments, dtype=bool)
    for c in contract.assumptions:
        if c.skipped is None:
            x = ev.values(nnf(trigger(c.formula)))
            sure, maybe = first_true(ev.s, x.lo), first_true(ev.s, x.hi)
            never |= maybe < 0
            undecided |= (maybe >= 0) & (maybe != sure)
            k = np.maximum(k, maybe)
    return np.where(never, NEVER, np.where(undecided, UNDECIDED, k))


def with_start(ev: Evaluator, kstar: IntArray) -> Evaluator:
    """``ev`` plus the ``START`` column: true at each segment's row k* (none where −1)."""
    s = ev.s
    start = (kstar[s.seg] >= 0) & (s.pos == kstar[s.seg])
    col = Col(start, np.zeros(s.n_rows, dtype=bool))
    return Evaluator(s, ChainMap({START: col}, ev.columns))  # type: ignore[arg-type]


class _Builder:
    """Accumulates one contract's verdict arrays and offending chunks."""

    def __init__(self, n_g: int, n_s: int) -> None:
        self.n_g, self.n_s = n_g, n_s
        self.verdict = np.full((n_g, n_s), PASS, dtype=np.int8)
        self.kind = np.full((n_g, n_s), -1, dtype=np.int8)
        self.blame = np.full((n_g, n_s), -1, dtype=np.int64)
        self.opened = np.full((n_g, n_s), -1, dtype=np.int64)
        self.reason = np.full((n_g, n_s), -1, dtype=np.int16)
        self.off: list[tuple[int, IntArray, IntArray]] = []  # (g, count per segment, pos)

    def violated(
        self, g: int, ch: Checks, where: npt.NDArray[np.bool_], kind: IntArray, shift: IntArray
    ) -> None:
        """Guarantee g violated where ``where``: kind, blame, opened, offending from ``ch``."""
        shifted = bool(shift.any())  # positions are -1 (none) or >= 0: kept as they are
        self.verdict[g][where] = VIOLATED
        self.kind[g][where] = kind[where]
        blame, opened = ch.blame[where], ch.opened[where]
        if shifted:
            blame = np.where(blame < 0, -1, blame + shift[where])
            opened = np.where(opened < 0, -1, opened + shift[where])
        self.blame[g][where] = blame
        self.opened[g][where] = opened
        counts = np.diff(ch.off_ptr)
        pos = ch.off_pos
        if bool(counts[~where].any()):
            pos = pos[np.repeat(where, counts)]
            counts = np.where(where, counts, 0)
        if shifted:
            pos = pos + np.repeat(shift, counts)
        self.off.append((g, counts, pos))

    def result(self, contract: Contract) -> ContractResult:
        counts = np.zeros((self.n_s, self.n_g), dtype=np.int64)
        for g, c, _ in self.off:
            counts[:, g] += c
        ptr = np.zeros(self.n_g * self.n_s + 1, dtype=np.int64)
        np.cumsum(counts.ravel(), out=ptr[1:])
        pos = np.concatenate([*(p for _, _, p in self.off), np.zeros(0, np.int64)])
        if len(self.off) > 1:  # one chunk is sorted by segment already
            keys = [np.repeat(np.arange(self.n_s) * self.n_g + g, c) for g, c, _ in self.off]
            pos = pos[np.argsort(np.concatenate(keys), kind="stable")]
        return ContractResult(
            contract,
            self.verdict,
            self.kind,
            self.blame,
            self.opened,
            self.reason,
            ptr,
            pos,
        )


def contract_verdicts(
    contract: Contract,
    segments: Segments,
    columns: Mapping[Atom, ColumnLike],
    checker: Checker | None = None,
) -> ContractResult:
    """``contract.judge`` on every segment (columns already in view order)."""
    return judge_all(contract, Evaluator(segments, columns), checker)


def judge_all(contract: Contract, ev: Evaluator, checker: Checker | None = None) -> ContractResult:
    """``contract_verdicts`` with an evaluator that contracts over one view can share."""
    gs = contract.guarantees
    out = _Builder(len(gs), ev.s.n_segments)
    if contract.skipped_assumption() is not None:
        # an assumption that cannot be evaluated must not be dropped: it could turn into a pass
        out.verdict[:] = SKIPPED
        out.reason[:] = 1 + len(gs)
        return out.result(contract)
    first_match = contract.activate_at == "first_match"
    if first_match:
        gev, shift, active = _first_match(out, ev, contract)
    else:
        gev, shift, active = (
            ev,
            np.zeros(ev.s.n_segments, np.int64),
            _assume(out, ev, contract, checker),
        )
    for g, clause in enumerate(gs):
        if clause.skipped is not None:
            out.verdict[g] = SKIPPED
            out.reason[g] = 1 + g
            continue
        f = at_activation(clause.formula) if first_match else clause.formula
        ch = check_formula(gev, f, checker)
        out.verdict[g, active & (ch.value == -1)] = UNVERIFIABLE
        out.violated(g, ch, active & (ch.value == 0), ch.kind.astype(np.int64), shift)
    return out.result(contract)


def _first_match(
    out: _Builder, ev: Evaluator, contract: Contract
) -> tuple[Evaluator, IntArray, npt.NDArray[np.bool_]]:
    """first_match: not_applicable where an assumption never holds; else the evaluator
    with the ``START`` column, no shift (positions are view positions), the active traces."""
    kstar = activation(ev, contract)
    active = kstar >= 0
    out.verdict[:, kstar == NEVER] = NOT_APPLICABLE
    out.verdict[:, kstar == UNDECIDED] = UNVERIFIABLE
    out.reason[:, kstar == UNDECIDED] = 0  # assumption unknown, as ``_assume`` says it
    return with_start(ev, kstar), np.zeros(ev.s.n_segments, np.int64), active


def _assume(
    out: _Builder, ev: Evaluator, contract: Contract, checker: Checker | None
) -> npt.NDArray[np.bool_]:
    """global: assumption violations (blamed like a guarantee) and unknowns; returns the
    traces whose guarantees are checked (assumptions true, or none)."""
    a = contract.assumption()
    if a is None:
        return np.ones(ev.s.n_segments, dtype=bool)
    ca = check_formula(ev, a, checker)
    kind = np.full(ev.s.n_segments, ASSUMPTION, dtype=np.int64)
    zero = np.zeros(ev.s.n_segments, np.int64)
    for g, clause in enumerate(contract.guarantees):
        if clause.skipped is None:
            out.violated(g, ca, ca.value == 0, kind, zero)
    out.verdict[:, ca.value == -1] = UNVERIFIABLE
    out.reason[:, ca.value == -1] = 0
    return ca.value == 1


# ---------------------------------------------------------------- tables


def evaluate_contracts(
    jobs: Iterable[tuple[Contract, View, Mapping[Atom, ColumnLike]]],
    checker: Checker | None = None,
    threads: int = 1,
) -> pa.Table:
    """Verdicts of many contracts, each over its view, as one RESULT_SCHEMA table.

    ``columns`` of a job are grounded over the table its view's ``rows``
    index; they are sampled at those rows here (each atom on first use).
    On ``threads`` threads the contracts are dealt out in turn, each thread with
    its own evaluators; the table is in the jobs' order whatever the number.
    """
    todo = list(jobs)
    n = max(1, min(threads, len(todo)))
    hands = [todo[k::n] for k in range(n)]
    judged = ordered_map(lambda hand: _judge_hand(hand, checker), hands, n)
    results: list[tuple[ContractResult, View]] = [judged[k % n][k // n] for k in range(len(todo))]
    return results_table(results)


def _judge_hand(
    jobs: list[tuple[Contract, View, Mapping[Atom, ColumnLike]]], checker: Checker | None
) -> list[tuple[ContractResult, View]]:
    """``judge_all`` of each job, with one evaluator per view: sub-formulas are computed once."""
    out = []
    shared: dict[tuple[int, int], tuple[View, Mapping[Atom, ColumnLike], Evaluator]] = {}
    for contract, view, columns in jobs:
        key = (id(view), id(columns))
        if key not in shared:  # keeps view and columns alive: ids stay unique
            shared[key] = (view, columns, Evaluator(view.segments, view_columns(columns, view)))
        out.append((judge_all(contract, shared[key][2], checker), view))
    return out
