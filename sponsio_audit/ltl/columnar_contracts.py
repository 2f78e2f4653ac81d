"""Contract verdicts for many traces at once (SEMANTICS.md §1 view, §4.2).

``columnar_views`` selects the rows a contract sees (its event types and
its agent) and lays them out as segments, one per trace (one per trace
and agent for ``per_agent`` contracts).
``contract_verdicts`` gives, for every segment and guarantee, exactly what
``contract.judge`` gives with the reference checker; ``evaluate_contracts``
runs many contracts and returns one Arrow table.

first_match activation is vectorised too: k* per trace is the latest of
the assumptions' first certainly-true rows, and the guarantees run on a
second segment structure made of the suffixes from k* (re-segmenting is
one row mask), their positions shifted back into the view.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from sponsio_audit.ltl.ast import And, Atom, Formula
from sponsio_audit.ltl.columnar import (
    Checker,
    Checks,
    ColumnLike,
    Evaluator,
    TakenColumns,
    check_formula,
)
from sponsio_audit.ltl.columnar_ops import IntArray, Segments
from sponsio_audit.ltl.columnar_table import VERDICT_SCHEMA, result_table, results_table
from sponsio_audit.ltl.columnar_views import View
from sponsio_audit.ltl.contract import Contract, Verdict
from sponsio_audit.vocab import KINDS, VERDICTS

__all__ = [
    "VERDICT_SCHEMA",
    "ContractResult",
    "contract_verdicts",
    "evaluate_contracts",
    "judge_all",
    "result_table",
    "view_columns",
]
from sponsio_audit.ltl.nnf import nnf

PASS, VIOLATED, UNVERIFIABLE, NOT_APPLICABLE, SKIPPED = range(5)
GUARANTEE, LIVENESS, ASSUMPTION = range(3)
ASSUMPTION_UNKNOWN = "assumption unknown"
Int8Array = npt.NDArray[np.int8]


# ---------------------------------------------------------------- verdicts


@dataclass(frozen=True, eq=False)
class ContractResult:
    """Verdicts of one contract: arrays of shape (guarantees, segments).

    ``verdict``/``kind`` index ``contract.VERDICTS``/``contract.KINDS``
    (−1 for no kind); ``blame``/``opened`` are view positions, −1 for none;
    ``reason`` indexes ``reasons()`` (−1 for none): 0 "assumption unknown",
    1 + g guarantee g's skip reason, 1 + G "assumption skipped: …".
    Offending positions of (s, g) are
    ``off_pos[off_ptr[s * G + g] : off_ptr[s * G + g + 1]]``.
    """

    contract: Contract
    verdict: Int8Array
    kind: Int8Array
    blame: IntArray
    opened: IntArray
    reason: npt.NDArray[np.int16]
    off_ptr: IntArray
    off_pos: IntArray

    def reasons(self) -> list[str]:
        """Reason texts by code: assumption unknown, each guarantee's skip, assumption skipped."""
        gs = self.contract.guarantees
        skipped_a = _skipped_assumption(self.contract)
        return [
            ASSUMPTION_UNKNOWN,
            *(g.skipped or "" for g in gs),
            f"assumption skipped: {skipped_a}",
        ]

    def reason_text(self, code: int) -> str | None:
        return None if code < 0 else self.reasons()[code]

    def verdicts(self, s: int) -> list[Verdict]:
        """Segment s as ``contract.judge`` returns it."""
        gs = self.contract.guarantees
        out = []
        for g in range(len(gs)):
            k = s * len(gs) + g
            out.append(
                Verdict(
                    g,
                    gs[g].text,
                    VERDICTS[self.verdict[g, s]],
                    KINDS[self.kind[g, s]] if self.kind[g, s] >= 0 else None,
                    None if self.blame[g, s] < 0 else int(self.blame[g, s]),
                    tuple(int(x) for x in self.off_pos[self.off_ptr[k] : self.off_ptr[k + 1]]),
                    None if self.opened[g, s] < 0 else int(self.opened[g, s]),
                    self.reason_text(int(self.reason[g, s])),
                )
            )
        return out


def first_true(s: Segments, x: npt.NDArray[np.bool_]) -> IntArray:
    """Per segment, the position of its first row where x holds, −1 if none."""
    rows = np.append(np.flatnonzero(x), s.n_rows)
    cand = rows[np.searchsorted(rows, s.first)]
    return np.where(cand < s.first + s.lengths, cand - s.first, -1)


def activation(ev: Evaluator, contract: Contract) -> IntArray:
    """k* per segment for first_match (−1 when some assumption never holds)."""
    k = np.zeros(ev.s.n_segments, dtype=np.int64)
    for c in contract.assumptions:
        if c.skipped is None:
            first = first_true(ev.s, ev.values(nnf(c.formula)).lo)
            k = np.where((k < 0) | (first < 0), -1, np.maximum(k, first))
    return k


def suffixes(ev: Evaluator, kstar: IntArray) -> Evaluator:
    """An evaluator over each segment's rows from k* on (empty where k* is −1)."""
    s = ev.s
    k_row = kstar[s.seg]
    rows = np.flatnonzero((k_row >= 0) & (s.pos >= k_row))
    sub = Segments.from_lengths(np.where(kstar >= 0, s.lengths - kstar, 0))
    return Evaluator(sub, TakenColumns(ev.columns, rows))


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
        self.verdict[g, where] = VIOLATED
        self.kind[g, where] = kind[where]
        self.blame[g, where] = np.where(ch.blame < 0, -1, ch.blame + shift)[where]
        self.opened[g, where] = np.where(ch.opened < 0, -1, ch.opened + shift)[where]
        counts = np.diff(ch.off_ptr)
        pos = ch.off_pos
        if bool(counts[~where].any()):
            pos = pos[np.repeat(where, counts)]
            counts = np.where(where, counts, 0)
        if bool(shift.any()):
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


def _skipped_assumption(contract: Contract) -> str | None:
    """The skip reason of the first skipped assumption, if any."""
    return next((c.skipped for c in contract.assumptions if c.skipped is not None), None)


def _conj(contract: Contract) -> Formula | None:
    fs = [c.formula for c in contract.assumptions if c.skipped is None]
    out = fs[0] if fs else None
    for f in fs[1:]:
        out = And(out, f)  # type: ignore[arg-type]
    return out


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
    if _skipped_assumption(contract) is not None:
        # an assumption that cannot be evaluated must not be dropped: it could turn into a pass
        out.verdict[:] = SKIPPED
        out.reason[:] = 1 + len(gs)
        return out.result(contract)
    if contract.activate_at == "first_match":
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
        ch = check_formula(gev, clause.formula, checker)
        out.verdict[g, active & (ch.value == -1)] = UNVERIFIABLE
        out.violated(g, ch, active & (ch.value == 0), ch.kind.astype(np.int64), shift)
    return out.result(contract)


def _first_match(
    out: _Builder, ev: Evaluator, contract: Contract
) -> tuple[Evaluator, IntArray, npt.NDArray[np.bool_]]:
    """first_match: not_applicable where an assumption never holds; else the evaluator
    over the suffixes from k*, the shift back to view positions, and the active traces."""
    kstar = activation(ev, contract)
    active = kstar >= 0
    out.verdict[:, ~active] = NOT_APPLICABLE
    if not bool((kstar > 0).any()):
        return ev, np.zeros(ev.s.n_segments, np.int64), active
    return suffixes(ev, kstar), np.maximum(kstar, 0), active


def _assume(
    out: _Builder, ev: Evaluator, contract: Contract, checker: Checker | None
) -> npt.NDArray[np.bool_]:
    """global: assumption violations (blamed like a guarantee) and unknowns; returns the
    traces whose guarantees are checked (assumptions true, or none)."""
    a = _conj(contract)
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


def view_columns(columns: Mapping[Atom, ColumnLike], view: View) -> Mapping[Atom, ColumnLike]:
    """Grounded columns sampled at the view's rows, each atom on first use (as they
    are when the view is every row of the table)."""
    rows = view.rows
    first = next(iter(columns.values()), None)
    if first is not None and len(rows) == len(first.value) and bool(np.all(np.diff(rows) == 1)):
        return columns
    return TakenColumns(columns, rows)


def evaluate_contracts(
    jobs: Iterable[tuple[Contract, View, Mapping[Atom, ColumnLike]]],
    checker: Checker | None = None,
) -> pa.Table:
    """Verdicts of many contracts, each over its view, as one VERDICT_SCHEMA table.

    ``columns`` of a job are grounded over the table its view's ``rows``
    index; they are sampled at those rows here (each atom on first use).
    """
    results = []
    shared: dict[tuple[int, int], tuple[View, Mapping[Atom, ColumnLike], Evaluator]] = {}
    for contract, view, columns in jobs:
        key = (id(view), id(columns))
        if key not in shared:  # one evaluator per view: sub-formulas are computed once
            shared[key] = (view, columns, Evaluator(view.segments, view_columns(columns, view)))
        results.append((judge_all(contract, shared[key][2], checker), view))
    return results_table(results)
