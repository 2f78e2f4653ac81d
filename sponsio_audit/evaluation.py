"""``evaluate(events, config) -> AuditTables``: the one pure engine entry point.

Events in, verdicts and violations out, nothing else read or written: the
store path (``api.audit``) and Spark (``sponsio_audit.spark``) both call it.
What it accepts, and what it refuses rather than judge wrongly:

- columns are found by name (extra ones are ignored, a missing one is an
  error naming it) and cast to ``EVENT_SCHEMA`` (``large_string`` and
  ``string_view`` from other Arrow producers become ``string``);
- a table is sorted by (trace_id, seq) when it is not; a stream
  (``RecordBatchReader``) is read in tables of whole traces
  (``whole_traces``), each trace's rows sorted by seq, and a trace whose rows
  come back after another trace started raises (*interleaved*);
- every trace's steps must be 0..n-1: a trace that lacks its first steps,
  has a gap or repeats a step raises (*split*: part of it went to another
  call, and the verdicts of either part would be wrong);
- ``config`` is the loaded configuration (contracts **and** the agents'
  permissions), or a ``ContractSet`` holding both; a bare list of contracts
  is refused, as ``perm(P)`` would silently be false for every agent.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.engine import columnar_raw, reference_raw
from sponsio_audit.event import EVENT_SCHEMA, OPTIONAL_COLUMNS
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.threads import background
from sponsio_audit.trace_batches import WHOLE_TRACE_ROWS, whole_traces
from sponsio_audit.verdicts import VERDICT_SCHEMA, VIOLATION_SCHEMA, build_tables

ENGINES = ("columnar", "reference")
T = TypeVar("T")


@dataclass(frozen=True)
class AuditTables:
    """The two result tables of an evaluation (``VERDICT_SCHEMA``, ``VIOLATION_SCHEMA``)."""

    verdicts: pa.Table
    violations: pa.Table


@dataclass(frozen=True)
class ContractSet:
    """Contracts with the permissions of their agents: what ``evaluate`` needs of a config."""

    contracts: tuple[Contract, ...]
    permissions: Mapping[str, frozenset[str]]


def permissions_of(config: Any) -> dict[str, frozenset[str]]:
    """The agents' permissions of a loaded ``Config`` (``agents``) or a ``ContractSet``."""
    if hasattr(config, "contracts") and hasattr(config, "permissions"):
        return {k: frozenset(v) for k, v in config.permissions.items()}
    if not hasattr(config, "contracts") or not hasattr(config, "agents"):
        raise TypeError(
            "evaluate takes the loaded config (contracts and the agents' permissions), "
            f"not {type(config).__name__}: contracts alone lose the permissions"
        )
    return {
        agent_id: frozenset(getattr(agent, "permissions", ()) or ())
        for agent_id, agent in config.agents.items()
    }


def normalised(events: pa.Table | pa.RecordBatch) -> pa.Table:
    """``events`` as ``EVENT_SCHEMA`` columns, looked up by name and cast."""
    names = set(events.schema.names)
    missing = [f.name for f in EVENT_SCHEMA if f.name not in names]
    if missing and all(m in OPTIONAL_COLUMNS for m in missing):  # never-shared prompts
        n = events.num_rows
        extra = [pa.nulls(n, EVENT_SCHEMA.field(m).type) for m in missing]
        events = pa.Table.from_arrays([*events.columns, *extra], [*events.schema.names, *missing])
        missing = []
    if missing:
        raise ValueError(f"events lack the column(s) {', '.join(missing)}")
    arrays = []
    for f in EVENT_SCHEMA:
        col = events.column(f.name)
        if not col.type.equals(f.type):
            try:
                col = col.cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise ValueError(f"events column {f.name}: {col.type} is not {f.type}: {e}") from e
        if not f.nullable and col.null_count:
            raise ValueError(f"events column {f.name} has null values")
        arrays.append(col)
    table = pa.Table.from_arrays(arrays, schema=EVENT_SCHEMA)
    return table


def _starts(trace_ids: pa.ChunkedArray) -> np.ndarray:
    """Start row of every run of equal trace ids."""
    n = len(trace_ids)
    new = np.ones(n, dtype=bool)
    if n > 1:
        diff = pc.not_equal(trace_ids.slice(1), trace_ids.slice(0, n - 1))
        new[1:] = np.asarray(diff.to_numpy(zero_copy_only=False), dtype=bool)
    return np.flatnonzero(new)


def _runs(trace_ids: pa.ChunkedArray) -> tuple[np.ndarray, int]:
    """Start row of every run of equal trace ids, and the number of distinct ids (those of
    the runs' first rows: every id starts a run)."""
    starts = _starts(trace_ids)
    return starts, len(pc.unique(trace_ids.take(pa.array(starts))))


def _steps_ok(seq: np.ndarray, starts: np.ndarray, n: int) -> bool:
    """Whether each run's seq is exactly 0, 1, …, len - 1."""
    lengths = np.diff(np.r_[starts, n])
    expected = np.arange(n) - np.repeat(starts, lengths)
    return bool(np.array_equal(seq, expected))


def ordered(table: pa.Table, *, may_sort: bool) -> pa.Table:
    """``table`` in (trace_id, seq) order, each trace's steps checked to be 0..n-1.

    ``may_sort``: traces may be interleaved (a whole table); otherwise a trace id in
    two runs is an interleaved stream and raises.
    """
    if not table.num_rows:
        return table
    starts, distinct = _runs(table.column("trace_id"))
    if len(starts) != distinct:
        if not may_sort:
            raise ValueError(
                "interleaved traces: a trace's events come back after another trace started; "
                "group the rows by trace_id (Spark: repartition by trace_id and sort within "
                "partitions by trace_id, seq)"
            )
        table = table.sort_by([("trace_id", "ascending"), ("seq", "ascending")])
        starts, _ = _runs(table.column("trace_id"))
    seq = table.column("seq").to_numpy()
    if _steps_ok(seq, starts, table.num_rows):
        return table
    # sort each trace by seq (keeping the order of traces), then check again
    trace_no = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, table.num_rows]))
    order = np.lexsort((seq, trace_no))
    table, seq = table.take(pa.array(order)), seq[order]
    if not _steps_ok(seq, starts, table.num_rows):
        lengths = np.diff(np.r_[starts, table.num_rows])
        expected = np.arange(table.num_rows) - np.repeat(starts, lengths)
        bad = int(np.flatnonzero(seq != expected)[0])
        tid = table.column("trace_id")[bad].as_py()
        raise ValueError(
            f"split trace {tid!r}: its steps are not 0..n-1 (step {int(seq[bad])} where "
            f"{int(expected[bad])} was due); every event of a trace must be in the same call"
        )
    return table


def _raw(events: pa.Table, contracts: tuple, perms: dict, engine: str, threads: int) -> pa.Table:
    if engine == "reference":
        return reference_raw(events, contracts, perms)
    return columnar_raw(events, contracts, perms, threads)


def _built(raw: pa.Table, events: pa.Table, contracts: tuple) -> AuditTables:
    verdicts, violations = build_tables(raw, events, contracts)
    del raw
    # hand the freed work memory of this table back to the system before the next: the
    # allocator keeps it otherwise, and the peak of 100 000 traces grows by a third
    pa.default_memory_pool().release_unused()
    return AuditTables(verdicts, violations)


def _chunks(reader: pa.RecordBatchReader, rows: int) -> Iterator[pa.Table]:
    """Normalised, ordered tables of whole traces of a stream (see the module doc)."""
    seen: set[str] = set()
    batches = (normalised(b).combine_chunks().to_batches()[0] for b in reader if b.num_rows)
    for table in whole_traces(batches, "trace_id", rows):
        table = ordered(table, may_sort=False)
        column = table.column("trace_id")  # one run per trace now: its first rows' ids
        ids = column.take(pa.array(_starts(column))).to_pylist() if table.num_rows else []
        if not seen.isdisjoint(ids):
            again = next(t for t in ids if t in seen)
            raise ValueError(
                f"interleaved traces: trace {again!r} comes back after other traces; "
                "group the rows by trace_id"
            )
        seen.update(ids)
        yield table


def evaluations(
    events: pa.Table | pa.RecordBatchReader,
    config: Any,
    *,
    engine: str = "columnar",
    rows: int = WHOLE_TRACE_ROWS,
    threads: int = 0,
) -> Iterator[AuditTables]:
    """``evaluate``, one ``AuditTables`` per table of whole traces (a stream stays a stream)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} ({' or '.join(ENGINES)})")
    perms = permissions_of(config)
    contracts = tuple(config.contracts)
    if isinstance(events, pa.RecordBatchReader):  # the next table read while one is judged
        tables: Iterator[pa.Table] = read_ahead(_chunks(events, rows))
    elif isinstance(events, (pa.Table, pa.RecordBatch)):
        tables = iter([ordered(normalised(events), may_sort=True)])
    else:
        raise TypeError(f"events must be a pyarrow Table or RecordBatchReader, not {events!r}")
    pending: Future[AuditTables] | None = None  # the table before, being built
    built: Future[AuditTables] | None = None  # this one
    try:
        while True:
            try:  # the next table, judged
                table = next(tables, None)
                if table is None:
                    break
                if not table.num_rows:
                    continue
                raw = _raw(table, contracts, perms, engine, threads)
            except BaseException:
                if pending is not None:
                    pending.result()  # the error of the table before first, as in turn
                raise
            # built on a thread of its own while the next table is judged
            built = background("build", _built, raw, table, contracts)
            del raw
            if pending is not None:
                yield pending.result()
            pending, built = built, None
        if pending is not None:
            yield pending.result()
            pending = None
    finally:  # no thread left: the caller may close the stream's cursor
        wait([f for f in (pending, built) if f is not None])
        pending = built = None  # no cycle from an error's traceback through the futures
        close = getattr(tables, "close", None)
        if close is not None:
            close()


_END = object()
_WAIT = 0.05
"""Seconds between two looks at the stop flag while the next table waits to be taken."""


def read_ahead(items: Iterator[T]) -> Iterator[T]:
    """``items``, each made on a thread of its own while the caller works on the one before.

    ``evaluate`` reads a stream (a DuckDB cursor) in tables of whole traces: reading the
    next (the store's scan, Arrow checks and casts, mostly outside the GIL) runs beside the
    judging of this one. One item at most waits; an exception of ``items`` is raised where
    its item would have come; once the iterator ends, fails or is closed, the thread has
    stopped and let go of the stream.
    """
    box: queue.Queue[tuple[bool, object]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(entry: tuple[bool, object]) -> bool:
        while not stop.is_set():
            try:
                box.put(entry, timeout=_WAIT)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((True, _END))
        except BaseException as e:  # raised in the caller, where the item would have come
            put((False, e))

    context = contextvars.copy_context()
    reader = threading.Thread(target=context.run, args=(run,), name="sponsio-read", daemon=True)
    reader.start()  # when the first item is asked for: an iterator never begun starts none
    try:
        while True:
            ok, got = box.get()
            if not ok:
                error, got = got, None
                assert isinstance(error, BaseException)
                try:
                    raise error
                finally:  # no cycle through this frame: its traceback (the stream's frames,
                    del error  # a cursor's result) is let go as soon as the caller is done
            if got is _END:
                return
            yield got  # type: ignore[misc]
    finally:
        stop.set()
        reader.join()
        close = getattr(items, "close", None)
        if close is not None:
            close()


def evaluate(
    events: pa.Table | pa.RecordBatchReader,
    config: Any,
    *,
    engine: str = "columnar",
    rows: int = WHOLE_TRACE_ROWS,
    threads: int = 0,
) -> AuditTables:
    """Verdicts and violations of ``config``'s contracts over ``events`` (module doc).

    A stream is evaluated ``rows`` rows of whole traces at a time, so the work
    memory is bounded by ``rows`` and the largest trace (four such tables at most: one
    waiting and one being read ahead, this one judged, the one before being built). The
    columnar engine grounds
    and judges each table on ``threads`` threads (0: the CPUs this process may use, at
    most four, for tables of ``threads.MIN_ROWS`` events or more, else one); the result
    is the same for any number.
    """
    parts = list(evaluations(events, config, engine=engine, rows=rows, threads=threads))
    if not parts:
        return AuditTables(VERDICT_SCHEMA.empty_table(), VIOLATION_SCHEMA.empty_table())
    # chunks stay chunks: combining would copy every column once more
    return AuditTables(
        pa.concat_tables([p.verdicts for p in parts]),
        pa.concat_tables([p.violations for p in parts]),
    )
