"""The view of a contract (SEMANTICS.md §1): the events it sees, for every engine.

A contract sees the events of the types its atoms are grounded from
(``view_types``), restricted to its agent; ``per_agent`` contracts see each
agent's events of a trace as a trace of their own. Stateful atoms are
grounded over every event of the agent-filtered (and, per agent,
regrouped) trace and only read at the view's positions (``flow`` reads
data_writes, which may be outside the view); a run atom
(``consecutive_count``, registry ``run``) counts positions of the view, so
every grounding takes ``view_types``: an event outside the view (an LLM event
for a tool contract) neither ends nor extends a run. This module is the
one place those rules live: ``groups``/``positions`` for one trace of
events (the reference engine), ``applies_to`` for the guard,
``agent_table`` and ``Views`` for an events table (the columnar engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms import registry
from sponsio_audit.ltl.columnar import Segments, View
from sponsio_audit.ltl.columnar.segments import IntArray
from sponsio_audit.ltl.contract import Contract


def view_types(contract: Contract) -> frozenset[str]:
    """Event types this contract sees: the source types of its atoms (§1)."""
    types: set[str] = set()
    for a in contract.atoms():
        spec = registry.lookup(a.name)
        if spec is not None:
            types |= spec.sources

    return frozenset(types)


def applies_to(contract: Contract, agent: str | None, event_type: str) -> bool:
    """True when events of ``agent`` and ``event_type`` are in the contract's view."""
    return contract.agent in (agent, "*") and event_type in view_types(contract)


def groups(contract: Contract, agents: Sequence[str | None]) -> list[list[int]]:
    """Indices of the events of one trace (their ``agents``) in each sub-trace the contract
    is evaluated on: restricted to its agent, split by agent (first seen first) when
    ``per_agent``; one empty group when nothing is left."""
    idxs = list(range(len(agents)))
    if contract.agent != "*":
        idxs = [i for i in idxs if agents[i] == contract.agent]
    if not contract.per_agent:
        return [idxs]
    by_agent: dict[str | None, list[int]] = {}
    for i in idxs:
        by_agent.setdefault(agents[i], []).append(i)
    return list(by_agent.values()) or [[]]


def positions(contract: Contract, types: Sequence[str | None]) -> list[int]:
    """Positions of a sub-trace (its event ``types``) that are in the contract's view."""
    seen = view_types(contract)
    return [p for p, t in enumerate(types) if t in seen]


def _bool(mask: pa.ChunkedArray | pa.Array) -> npt.NDArray[np.bool_]:
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)


def agent_table(
    events: pa.Table, trace: IntArray, n_traces: int, agent: str, per_agent: bool
) -> tuple[pa.Table, pa.Table, IntArray, IntArray, npt.NDArray[np.bool_]]:
    """The events a group of contracts of ``agent`` is grounded over (rows sorted by trace).

    Returns the table, the table to ground (for ``per_agent`` its trace_id is keyed by
    trace and agent, so stateful atoms run per (trace, agent)), the trace number and the
    ``events`` row of each row, and which traces have an event of the agent.
    """
    table, tr, rowmap = events, trace, np.arange(events.num_rows)
    present = np.ones(n_traces, dtype=bool)
    if agent != "*":
        keep = _bool(pc.equal(events.column("agent"), agent))
        table, tr, rowmap = events.filter(pa.array(keep)), trace[keep], rowmap[keep]
        present = np.bincount(tr, minlength=n_traces) > 0
    grounded = table
    if per_agent:  # regroup by (trace, agent), in order inside each group
        agents = pc.fill_null(table.column("agent"), "").to_numpy(zero_copy_only=False)
        order = np.lexsort((np.arange(table.num_rows), agents, tr))
        table, tr, rowmap = table.take(pa.array(order)), tr[order], rowmap[order]
        key = pc.binary_join_element_wise(
            table.column("trace_id"), pc.fill_null(table.column("agent"), ""), "\x1f"
        )
        grounded = table.set_column(table.schema.get_field_index("trace_id"), "trace_id", key)
    return table, grounded, tr, rowmap, present


class TableIndex(Protocol):
    """Per-table work a grounding has done already (``atoms.columnar.Grounding``)."""

    segments: Segments
    """Where each trace lies in the table's rows."""

    def trace_number(self) -> tuple[IntArray, int]:
        """``trace_index`` of the table's trace_id column."""
        ...

    def equal_mask(self, column: str, value: str) -> npt.NDArray[np.bool_]:
        """Rows where string ``column`` equals ``value`` (null rows: False)."""
        ...


def trace_index(trace_ids: pa.Array | pa.ChunkedArray) -> tuple[IntArray, int]:
    """Trace number of every row (rows sorted by trace) and the number of traces."""
    s = Segments.of_ids(trace_ids)
    return s.seg, s.n_segments


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
        self.layout: Segments | None = None
        if trace is None or n_traces is None:
            if index is not None:  # its trace layout is this table's: no per-row trace numbers
                self.layout = index.segments
                trace, n_traces = None, self.layout.n_segments
            else:
                trace, n_traces = trace_index(table.column("trace_id"))
        self.table = table
        self.index = index
        self._trace: IntArray | None = trace
        self.n_traces = n_traces
        self.masks: dict[tuple[str, str], npt.NDArray[np.bool_]] = {}
        self.cache: dict[tuple[frozenset[str], str, bool], View] = {}

    @property
    def trace(self) -> IntArray:
        """Trace number of every row (computed on first use when the layout is known)."""
        if self._trace is None:
            assert self.layout is not None
            self._trace = self.layout.seg
        return self._trace

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
        for t in sorted(view_types(contract)):
            mask |= self._is("type", t)
        if contract.agent != "*":
            mask &= self._is("agent", contract.agent)
        return mask

    def _lengths(self, rows: IntArray) -> IntArray:
        """Rows of the view (sorted ``rows`` of the table) per trace: a binary search of
        each trace's bounds (the table's rows are sorted by trace)."""
        if self.layout is None:
            self.layout = Segments.from_keys(self.trace, self.n_traces)
        s = self.layout
        bounds = np.searchsorted(rows, np.append(s.first, s.n_rows))
        return np.diff(bounds).astype(np.int64)

    def of(self, contract: Contract) -> View:
        """The contract's view. For ``per_agent`` contracts the rows are regrouped by
        (trace, agent), in order inside each group: the caller must then have
        grounded stateful atoms per (trace, agent)."""
        key = (view_types(contract), contract.agent, contract.per_agent)
        view = self.cache.get(key)
        if view is None:
            mask = self.mask(contract)
            rows = np.flatnonzero(mask)
            if contract.per_agent:
                view = _per_agent_view(self.table, rows, self.trace[rows], self.n_traces)
            else:
                seg = Segments.from_lengths(self._lengths(rows))
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
