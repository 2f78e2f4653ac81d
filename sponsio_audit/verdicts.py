"""The ``verdicts`` and ``violations`` tables (ARCHITECTURE.md store schema).

Both evaluation engines (reference and columnar) produce the same *raw*
table (``RAW_SCHEMA``): one row per (trace, contract, guarantee) with the
blamed, opened and offending events as row numbers of the events table.
``build_tables`` turns it into the two tables that reports read, with
Arrow ``take``s rather than a Python loop per verdict; only the evidence
sentence is formatted per violation. Columns that repeat one value per
contract or guarantee (guarantee text, severity, strategy) are dictionary
arrays over the contracts' values, not copies: a verdict row per trace ×
guarantee (100 000 traces × the default pack: 9 million rows) would
otherwise copy every guarantee text nine million times.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms.arrays import nonzero
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.ltl.patterns import describe
from sponsio_audit.reasons import explain
from sponsio_audit.row_order import in_order, text_codes
from sponsio_audit.vocab import ASSUMPTION, GUARANTEE, VIOLATED

TEXT = pa.dictionary(pa.int32(), pa.string())
"""A string column stored as indices into its distinct values."""

RAW_SCHEMA = pa.schema(
    [
        pa.field("trace_id", TEXT, nullable=False),
        pa.field("contract_id", TEXT, nullable=False),
        pa.field("guarantee", pa.int32(), nullable=False),
        pa.field("verdict", TEXT, nullable=False),
        pa.field("kind", TEXT),
        pa.field("blame_row", pa.int64()),
        pa.field("opened_row", pa.int64()),
        pa.field("offending_rows", pa.list_(pa.int64())),
        pa.field("reason", pa.string()),
    ]
)
"""What an engine returns: rows index the events table (sorted by trace_id, seq)."""

VERDICT_SCHEMA = pa.schema(
    [
        pa.field("trace_id", TEXT, nullable=False),
        pa.field("contract_id", TEXT, nullable=False),
        pa.field("guarantee", pa.int32(), nullable=False),
        pa.field("guarantee_text", TEXT),
        pa.field("verdict", TEXT, nullable=False),
        pa.field("kind", TEXT),
        pa.field("blame_seq", pa.int64()),
        pa.field("opened_seq", pa.int64()),
        pa.field("offending", pa.int64()),
        pa.field("reason", pa.string()),
    ]
)
"""One row per (trace, contract, guarantee). ``offending`` counts offending events. The
trace, contract, verdict and kind columns are dictionary arrays too: 100 000 traces × the
default pack are 3.2 million rows, and a trace id copied per guarantee costs more than
the rest of the table."""

VIOLATION_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string(), nullable=False),
        pa.field("contract_id", pa.string(), nullable=False),
        pa.field("guarantee", pa.int32(), nullable=False),
        pa.field("guarantee_text", TEXT),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("severity", TEXT, nullable=False),
        pa.field("strategy", TEXT, nullable=False),
        pa.field("seq", pa.int64()),
        pa.field("blamed", pa.bool_(), nullable=False),
        pa.field("span_id", pa.string()),
        pa.field("tool", pa.string()),
        pa.field("agent", pa.string()),
        pa.field("evidence", pa.string(), nullable=False),
        pa.field("opened_seq", pa.int64()),
        pa.field("file_id", pa.int64()),
        pa.field("record", pa.int64()),
    ]
)
"""One row per offending event of a violated guarantee (the blamed one flagged).

A violation with no event to blame (a liveness obligation on an empty view,
e.g. ``F called(x)`` on a trace without tool calls) has one row with a null seq.
"""


def _lookup(contracts: Sequence[Contract], ids: pa.ChunkedArray, g: pa.ChunkedArray) -> dict:
    """Per-row guarantee text, severity and strategy, by Arrow takes over small tables."""
    keys = pa.array([c.id for c in contracts], type=pa.string())
    whole = ids.chunk(0) if isinstance(ids, pa.ChunkedArray) and ids.num_chunks == 1 else ids
    if isinstance(whole, pa.DictionaryArray) and not whole.null_count:  # its values looked up
        ci = pc.take(pc.index_in(whole.dictionary, value_set=keys), whole.indices)
    else:
        ci = pc.index_in(ids, value_set=keys)
    ci = ci.to_numpy(zero_copy_only=False)
    base = np.cumsum([0] + [len(c.guarantees) for c in contracts])[:-1]
    texts = pa.array([gg.text for c in contracts for gg in c.guarantees], type=pa.string())
    gi = (base[ci.astype(np.int64)] + g.to_numpy().astype(np.int64)).astype(np.int32)
    cj = pa.array(ci.astype(np.int32))
    return {
        "guarantee_text": pa.DictionaryArray.from_arrays(pa.array(gi), texts),
        "severity": pa.DictionaryArray.from_arrays(
            cj, pa.array([c.severity for c in contracts], pa.string())
        ),
        "strategy": pa.DictionaryArray.from_arrays(
            cj, pa.array([c.strategy.kind for c in contracts], pa.string())
        ),
    }


class _Events:
    """Columns of the events table made contiguous once (a take on a many-chunk
    column costs far more than on one array)."""

    def __init__(self, events: pa.Table) -> None:
        self.events = events
        self._cols: dict[str, pa.Array] = {}

    def take(self, column: str, rows: pa.Array | pa.ChunkedArray) -> pa.Array:
        col = self._cols.get(column)
        if col is None:
            whole = self.events.column(column)
            col = whole.chunk(0) if whole.num_chunks == 1 else whole.combine_chunks()
            self._cols[column] = col
        return pc.take(col, rows)


def as_text(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A text column as one ``TEXT`` dictionary array."""
    if isinstance(column, pa.ChunkedArray) and column.num_chunks == 1:
        column = column.chunk(0)
    if isinstance(column, pa.Array) and column.type.equals(TEXT):
        return column  # one TEXT array already
    codes, values = text_codes(column)
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    valid = codes < len(values)
    idx = pa.array(codes.astype(np.int32), mask=None if valid.all() else ~valid)
    return pa.DictionaryArray.from_arrays(idx, values.cast(pa.string()))


def _plain(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """A text column as plain strings (the violations table: few rows)."""
    return column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column


def _texts(raw: pa.Table) -> pa.Table:
    """``raw`` with its text columns as single dictionary arrays (RAW_SCHEMA's types)."""
    cols = {
        name: as_text(raw.column(name)) if name in _TEXT_COLUMNS else raw.column(name)
        for name in raw.column_names
    }
    return pa.table(cols, schema=RAW_SCHEMA)


_TEXT_COLUMNS = ("trace_id", "contract_id", "verdict", "kind")


def build_tables(
    raw: pa.Table, events: pa.Table, contracts: Sequence[Contract]
) -> tuple[pa.Table, pa.Table]:
    """The ``verdicts`` and ``violations`` tables of an engine's raw table (sorted)."""
    raw = in_order(_texts(raw))
    ev = _Events(events)
    by_id = {c.id: c for c in contracts}
    info = _lookup(contracts, raw.column("contract_id"), raw.column("guarantee"))
    verdicts = pa.table(
        {
            "trace_id": raw.column("trace_id"),
            "contract_id": raw.column("contract_id"),
            "guarantee": raw.column("guarantee"),
            "guarantee_text": info["guarantee_text"],
            "verdict": raw.column("verdict"),
            "kind": raw.column("kind"),
            "blame_seq": ev.take("seq", raw.column("blame_row")),
            "opened_seq": ev.take("seq", raw.column("opened_row")),
            "offending": pc.fill_null(pc.list_value_length(raw.column("offending_rows")), 0).cast(
                pa.int64()
            ),
            "reason": explain(raw, events, contracts),
        },
        schema=VERDICT_SCHEMA,
    )
    bad_rows = nonzero(pc.equal(raw.column("verdict"), VIOLATED))
    if len(bad_rows) == 0:
        return verdicts, VIOLATION_SCHEMA.empty_table()
    # offending rows, each violated verdict at least once (a null row when nothing to blame)
    offending = pc.take(raw.column("offending_rows"), bad_rows)
    off = pc.if_else(
        pc.fill_null(pc.greater(pc.list_value_length(offending), 0), False),
        offending,
        pa.scalar([None], pa.list_(pa.int64())),
    )
    parent = pc.list_parent_indices(off)
    rows = pc.list_flatten(off)
    at = pc.take(bad_rows, parent)  # each violation row's row in ``raw``
    # the columns violations need, taken once; text columns stay dictionaries until the end
    v = raw.select(["trace_id", "contract_id", "guarantee", "kind", "blame_row", "opened_row"])
    v = v.take(at)
    binfo = {name: pc.take(col, at) for name, col in info.items()}
    seq = ev.take("seq", rows)
    tool = ev.take("tool", rows)
    opened_row = v.column("opened_row")
    opened_seq = ev.take("seq", opened_row)
    opened_tool = ev.take("tool", opened_row)
    evidence = _evidence(
        by_id,
        v.column("contract_id"),
        v.column("guarantee"),
        v.column("kind"),
        seq,
        tool,
        opened_seq,
        opened_tool,
    )
    kind = pc.fill_null(_plain(v.column("kind")), GUARANTEE)  # strings: few rows
    violations = pa.table(
        {
            "trace_id": _plain(v.column("trace_id")),
            "contract_id": _plain(v.column("contract_id")),
            "guarantee": v.column("guarantee"),
            "guarantee_text": binfo["guarantee_text"],
            "kind": kind,
            # an assumption violation says the environment broke its promise: always low
            # (SEMANTICS.md §4.2), so an assumption gate never fails a CI job by itself
            "severity": pc.if_else(pc.equal(kind, ASSUMPTION), "low", binfo["severity"]),
            "strategy": binfo["strategy"],
            "seq": seq,
            "blamed": pc.fill_null(pc.equal(rows, v.column("blame_row")), True),
            "span_id": ev.take("span_id", rows),
            "tool": tool,
            "agent": ev.take("agent", rows),
            "evidence": evidence,
            "opened_seq": opened_seq,
            "file_id": ev.take("file_id", rows),
            "record": ev.take("record", rows),
        },
        schema=VIOLATION_SCHEMA,
    )
    return verdicts, violations


_STEP = "\ue000"  # stands for the step number in an evidence template


def _evidence(by_id: dict[str, Contract], *cols: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Evidence sentences, one per violation row.

    ``describe`` runs once per distinct (contract, guarantee, kind, tool, opened
    step, opened tool) with a marker where the step goes; the step numbers are
    then joined in with Arrow, once per distinct sentence, since violations can number
    in the hundreds of thousands.
    """
    cid, g, kind, seq, tool, opened_seq, opened_tool = cols
    keyed = (cid, g, kind, tool, opened_seq, opened_tool)
    group, firsts = group_rows(keyed)
    names = ["c", "g", "k", "t", "os", "ot"]
    prefix, suffix, has_step = [], [], []
    for r in pa.table(list(keyed), names=names).take(firsts).to_pylist():
        text = describe(
            by_id[r["c"]],
            r["g"],
            r["k"] or GUARANTEE,
            seq=_STEP,
            tool=r["t"],
            opened_seq=r["os"],
            opened_tool=r["ot"],
        )
        head, found, tail = text.partition(_STEP)
        prefix.append(head)
        suffix.append(tail)
        has_step.append(bool(found))
    idx = pa.array(group)
    # each distinct (template, step) sentence written once, then taken for its rows
    sentence, first = group_rows([idx, seq])
    template = idx.take(first)
    step = pc.if_else(
        pa.array(has_step, pa.bool_()).take(template),
        pc.fill_null(pc.cast(pc.take(seq, first), pa.string()), "?"),
        "",
    )
    texts = pc.binary_join_element_wise(
        pa.array(prefix, pa.string()).take(template),
        step,
        pa.array(suffix, pa.string()).take(template),
        "",
    )
    out = pc.take(texts, pa.array(sentence))
    # one array (``pa.array`` of a chunked one would convert every sentence through Python)
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def _key_codes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, int]:
    """Codes 0..size-1 of a column's values (equal values, equal codes; null its own)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_integer(column.type):
        values = np.asarray(pc.fill_null(column, 0).to_numpy(zero_copy_only=False), np.int64)
        low = int(values.min()) if len(values) else 0
        codes = values - low + 1
        if column.null_count:
            codes[np.asarray(column.is_null())] = 0
        return codes, int(codes.max()) + 1 if len(codes) else 1
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    size = len(column.dictionary)
    return np.asarray(pc.fill_null(column.indices, size).to_numpy(), np.int64), size + 1


def group_rows(columns: Sequence[pa.ChunkedArray | pa.Array]) -> tuple[np.ndarray, pa.Array]:
    """Each row's group of equal values over ``columns`` (0, 1, … by first row) and the
    first row of each group: one integer key per row (mixed radix of the columns'
    codes), hashed once, instead of joining the values as text."""
    n = len(columns[0])
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for column in columns:
        codes, size = _key_codes(column)
        if span * size >= 2**62:  # keep the key in 64 bits: renumber it densely first
            dense = pc.dictionary_encode(pa.array(key))
            key, span = np.asarray(dense.indices.to_numpy(), np.int64), len(dense.dictionary)
        key = key * size + codes
        span *= size
    enc = pc.dictionary_encode(pa.array(key))  # groups numbered by first appearance
    group = np.asarray(enc.indices.to_numpy(), np.int64)
    first = np.empty(len(enc.dictionary), dtype=np.int64)
    first[group[::-1]] = np.arange(n - 1, -1, -1)  # the last write is the first row
    return group, pa.array(first)


def count_by(table: pa.Table, column: str, order: Sequence[str] = ()) -> dict[str, int]:
    """Counts of each value of ``column``: the keys of ``order`` first (always present), then
    the others as SQL's ``ORDER BY`` sorts them (a null last, as ``'None'``), as
    ``totals.summary`` reads them from a store."""
    out = dict.fromkeys(order, 0)
    if table.num_rows:  # value_counts, not group_by: chunks' dictionaries may differ
        found = pc.value_counts(table.column(column)).to_pylist()
        for item in sorted(found, key=lambda r: (r["values"] is None, str(r["values"]))):
            out[str(item["values"])] = int(item["counts"])
    return out


def as_stored(table: pa.Table) -> pa.Table:
    """``table`` (verdicts or violations) typed as DuckDB gives a stored copy back:
    dictionary columns as their values (DuckDB has no dictionary type), every column
    nullable; what a report reads is the same whether the table was stored or not."""
    fields = [
        pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type)
        for f in table.schema
    ]
    return table.cast(pa.schema(fields))
