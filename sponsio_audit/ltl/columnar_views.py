"""Contract views (SEMANTICS.md §1): the rows a contract sees, as segments.

A contract sees the events of the types its atoms are grounded from,
restricted to its agent; ``per_agent`` contracts see each agent's events
of a trace as a trace of their own. ``Views`` selects those rows from the
events table (sorted by (trace_id, seq)) with the per-table work done
once: trace numbers, and one cached row mask per event type and agent.
Atom columns grounded over the table are then sampled at ``View.rows``
(stateful atoms are grounded over every event of the agent-filtered
trace, and only sampled at the view).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.ltl.columnar_ops import IntArray, Segments
from sponsio_audit.ltl.contract import Contract


@dataclass(frozen=True, eq=False)
class View:
    """The rows one contract sees, as segments.

    ``rows`` index the table the atom columns were grounded over, in view
    order; ``trace[s]`` is the trace index of segment s and ``agent[s]`` its
    agent (per_agent contracts only, else None).
    """

    rows: IntArray
    segments: Segments
    trace: IntArray
    agent: list[str | None] | None = None


class TableIndex(Protocol):
    """Per-table work a grounding has done already (``atoms.columnar.Grounding``)."""

    def trace_number(self) -> tuple[IntArray, int]:
        """``trace_index`` of the table's trace_id column."""
        ...

    def equal_mask(self, column: str, value: str) -> npt.NDArray[np.bool_]:
        """Rows where string ``column`` equals ``value`` (null rows: False)."""
        ...


def trace_index(trace_ids: pa.Array | pa.ChunkedArray) -> tuple[IntArray, int]:
    """Trace number of every row (rows sorted by trace) and the number of traces."""
    n = len(trace_ids)
    new = np.ones(n, dtype=bool)
    if n > 1:
        diff = pc.not_equal(trace_ids.slice(1), trace_ids.slice(0, n - 1))
        new[1:] = np.asarray(pc.fill_null(diff, True).to_numpy(zero_copy_only=False))
    code = np.cumsum(new, dtype=np.int64) - 1
    return code, int(new.sum())


def _equal_mask(column: pa.Array | pa.ChunkedArray, value: str) -> npt.NDArray[np.bool_]:
    """Rows where a string column equals ``value`` (null rows: False)."""
    eq = pc.fill_null(pc.equal(column, pa.scalar(value, pa.string())), False)
    return np.asarray(eq.to_numpy(zero_copy_only=False), dtype=bool)


class Views:
    """The contract views of one events table (rows sorted by (trace_id, seq)).

    The shared work is done once per table: trace numbers, and one row mask
    per event type and per agent, each computed on first use (a view is then
    an OR of a few cached masks). Views are cached by what defines them
    (types, agent, per_agent), so contracts that see the same rows share one
    ``View`` (and ``evaluate_contracts`` then shares one evaluator).

    ``trace``/``n_traces`` default to ``trace_index(table["trace_id"])``;
    pass them to include traces without events. Traces with no row in a
    view get an empty segment. ``index``: the grounding of the same table,
    whose trace numbers and type/agent codes are then reused.
    """

    def __init__(
        self,
        table: pa.Table,
        trace: IntArray | None = None,
        n_traces: int | None = None,
        index: TableIndex | None = None,
    ) -> None:
        if trace is None or n_traces is None:
            got = index.trace_number() if index is not None else None
            trace, n_traces = got or trace_index(table.column("trace_id"))
        self.table = table
        self.index = index
        self.trace, self.n_traces = trace, n_traces
        self.masks: dict[tuple[str, str], npt.NDArray[np.bool_]] = {}
        self.cache: dict[tuple[frozenset[str], str, bool], View] = {}
        self.heads: IntArray | None = None

    def _is(self, column: str, value: str) -> npt.NDArray[np.bool_]:
        got = self.masks.get((column, value))
        if got is None:
            if self.index is not None:
                got = self.index.equal_mask(column, value)
            else:
                got = _equal_mask(self.table.column(column), value)
            self.masks[(column, value)] = got
        return got

    def mask(self, contract: Contract) -> npt.NDArray[np.bool_]:
        """Rows in the contract's view: its event types (§1), restricted to its agent."""
        mask = np.zeros(self.table.num_rows, dtype=bool)
        for t in sorted(contract.view_types()):
            mask |= self._is("type", t)
        if contract.agent != "*":
            mask &= self._is("agent", contract.agent)
        return mask

    def _lengths(self, mask: npt.NDArray[np.bool_]) -> IntArray:
        """Rows of ``mask`` per trace (the table's rows are sorted by trace)."""
        if self.heads is None:
            new = np.ones(len(self.trace), dtype=bool)
            new[1:] = self.trace[1:] != self.trace[:-1]
            self.heads = np.flatnonzero(new)
            if bool(np.any(np.diff(self.trace[self.heads]) <= 0)):
                raise ValueError("rows must be sorted by segment")
        lengths = np.zeros(self.n_traces, dtype=np.int64)
        if len(self.heads):
            counts = np.add.reduceat(mask.view(np.uint8), self.heads, dtype=np.int64)
            lengths[self.trace[self.heads]] = counts
        return lengths

    def of(self, contract: Contract) -> View:
        """The contract's view. For ``per_agent`` contracts the rows are regrouped by
        (trace, agent), in order inside each group: the caller must then have
        grounded stateful atoms per (trace, agent)."""
        key = (contract.view_types(), contract.agent, contract.per_agent)
        view = self.cache.get(key)
        if view is None:
            mask = self.mask(contract)
            rows = np.flatnonzero(mask)
            if contract.per_agent:
                view = _per_agent_view(self.table, rows, self.trace[rows], self.n_traces)
            else:
                seg = Segments.from_lengths(self._lengths(mask))
                view = View(rows, seg, np.arange(self.n_traces, dtype=np.int64))
            self.cache[key] = view
        return view


def build_view(
    table: pa.Table,
    contract: Contract,
    trace: IntArray | None = None,
    n_traces: int | None = None,
) -> View:
    """The contract's view of ``table``: ``Views(table, trace, n_traces).of(contract)``.

    Use one ``Views`` for many contracts over the same table.
    """
    return Views(table, trace, n_traces).of(contract)


def _per_agent_view(table: pa.Table, rows: IntArray, tr: IntArray, n_traces: int) -> View:
    """Segments keyed by (trace, agent); traces with no rows keep one empty segment."""
    enc = pc.dictionary_encode(table.column("agent").take(pa.array(rows))).combine_chunks()
    names = enc.dictionary.to_pylist()
    code = np.asarray(pc.fill_null(enc.indices, len(names)).to_numpy(zero_copy_only=False))
    order = np.lexsort((code, tr))
    rows, tr, code = rows[order], tr[order], code[order]
    new = np.ones(len(rows), dtype=bool)
    new[1:] = (tr[1:] != tr[:-1]) | (code[1:] != code[:-1])
    heads = np.flatnonzero(new)
    lengths = np.diff(np.append(heads, len(rows)))
    missing = np.setdiff1d(np.arange(n_traces), tr[heads])
    seg_trace = np.concatenate([tr[heads], missing])
    seg_len = np.concatenate([lengths, np.zeros(len(missing), dtype=np.int64)])
    seg_code = np.concatenate([code[heads], np.full(len(missing), len(names))])
    by_trace = np.argsort(seg_trace, kind="stable")
    agents = [*names, None]
    return View(
        rows,
        Segments.from_lengths(seg_len[by_trace]),
        seg_trace[by_trace].astype(np.int64),
        [agents[c] for c in seg_code[by_trace].tolist()],
    )
