"""Derived columns of one events table, shared by every atom of the columnar grounding.

``Columns`` dictionary-encodes the string columns it is asked about once
(``encoded``): tool names, event types and agents become integer codes
compared through lookup tables over their few distinct values; regexes
and JSON parsing run on the *distinct* strings found at the rows of
interest (``distinct``), and the result is spread back to rows by code.
Everything is cached, so grounding many atoms costs little more than
grounding one; atoms may be grounded on several threads (``cached`` computes
each derived column once, whichever thread asks first).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms import fields
from sponsio_audit.atoms.arrays import (
    lookup,
    narrow_codes,
    numpy_dtype,
    raw_values,
    select,
    to_numpy,
    valid_mask,
)
from sponsio_audit.atoms.online import Permissions
from sponsio_audit.atoms.registry import TOOL
from sponsio_audit.event import EVENT_TYPES
from sponsio_audit.ltl.columnar.segments import Segments
from sponsio_audit.regexes import compile_regex, is_backtracking, matches

VOCABULARIES: dict[str, tuple[str, ...]] = {"type": EVENT_TYPES}
"""String columns whose values are (nearly always) from a known list: encoded against it,
by hashing only when some value is not in it (or null)."""


@dataclass(frozen=True)
class Column:
    """An atom over all rows: ``value`` (bool or float64) and ``unknown`` (bool).

    ``value`` is False/0 wherever ``unknown`` is True.
    """

    value: np.ndarray
    unknown: np.ndarray
    coded: tuple[np.ndarray, np.ndarray] | None = None
    """Optionally ``(codes, lut)`` with ``value == lut[codes]`` (see ``ColumnLike``)."""


@dataclass(frozen=True, eq=False)
class CodedColumn:
    """A bool ``Column`` given by a lookup table over shared codes: its ``value`` is made
    on first read only, as a view samples the codes instead (and an ∨ of fifty tools'
    atoms is one table, ``Evaluator.coded``)."""

    codes: np.ndarray
    lut: np.ndarray
    unknown: np.ndarray

    @property
    def coded(self) -> tuple[np.ndarray, np.ndarray]:
        return self.codes, self.lut

    @cached_property
    def value(self) -> np.ndarray:
        """``lut[codes]`` at every row."""
        return lookup(self.lut, self.codes)


@dataclass(frozen=True, eq=False)
class Encoded:
    """A dictionary-encoded string column: integer ``codes`` (nulls get len(dictionary)),
    int8 or int16 when the dictionary is small."""

    codes: np.ndarray
    dictionary: pa.Array

    @cached_property
    def values(self) -> list[Any]:
        return list(self.dictionary.to_pylist())

    def where(self, test: Callable[[Any], bool]) -> np.ndarray:
        """Rows whose value passes ``test`` (called once per distinct value and for null)."""
        lut = np.array([bool(test(v)) for v in [*self.values, None]], dtype=bool)
        return lookup(lut, self.codes)


@dataclass(frozen=True, eq=False)
class Distinct:
    """The non-null values of a column at some rows, by distinct value.

    Row ``at[i]`` holds ``values[ids[i]]``.
    """

    at: np.ndarray
    ids: np.ndarray
    values: pa.Array


class Columns:
    """Derived columns of one events table, each computed once and cached."""

    def __init__(
        self, table: pa.Table, permissions: Permissions = None, segments: Segments | None = None
    ) -> None:
        """``segments``: the table's trace layout when the caller has it already."""
        self.table = table
        self.n = table.num_rows
        self.permissions = permissions
        self._cache: dict[Hashable, Any] = {}
        self._making: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()
        self.segments = Segments.of_ids(table.column("trace_id")) if segments is None else segments
        self.start = self.segments.start

    def trace_number(self) -> tuple[np.ndarray, int]:
        """Trace number of every row and the number of traces (``Segments.seg``)."""
        return self.segments.seg, self.segments.n_segments

    def equal_mask(self, column: str, value: str) -> np.ndarray:
        """Rows where string ``column`` equals ``value`` (null rows: False)."""
        if column == "type":
            return self.is_type(value)
        return self.cached(
            ("eq", column, value), lambda: self.where_value(column, lambda v: v == value)
        )

    # ------------------------------------------------------------ shared columns

    def cached(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """``make()`` once per ``key``, then from the cache. Another thread asking for
        the same key meanwhile waits for it: shared columns are computed once, and
        columns that share codes keep the same code array (``TakenColumns``)."""
        try:
            return self._cache[key]
        except KeyError:
            pass
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        with making:  # keys depend on others without cycles: no two threads wait in a ring
            if key not in self._cache:
                self._cache[key] = make()
        return self._cache[key]

    def encoded(self, name: str) -> Encoded:
        """Column ``name`` dictionary-encoded (once)."""

        def make() -> Encoded:
            col = self.col(name).cast(pa.string())
            if name in VOCABULARIES:  # codes by lookup in the known values (cheaper than hashing)
                known = pa.array(VOCABULARIES[name], pa.string())
                idx = pc.index_in(col, value_set=known)
                if idx.null_count == 0:
                    return Encoded(narrow_codes(idx, len(known)), known)
            enc = pc.dictionary_encode(col)
            size = len(enc.dictionary)
            return Encoded(narrow_codes(enc.indices, size), enc.dictionary)

        return self.cached(("enc", name), make)

    def _encoded(self, name: str) -> tuple[np.ndarray, list[Any]]:
        """Dictionary codes of a string column (nulls get code len(dictionary))."""
        enc = self.encoded(name)
        return enc.codes, enc.values

    def where_value(self, name: str, test: Callable[[Any], bool]) -> np.ndarray:
        """Rows whose string ``name`` passes ``test`` (called once per distinct value)."""
        return self.encoded(name).where(test)

    def is_type(self, kind: str) -> np.ndarray:
        return self.cached(("type", kind), lambda: self.where_value("type", lambda v: v == kind))

    def _call_codes(self) -> np.ndarray:
        """Tool codes at tool calls, the null code elsewhere."""

        def make() -> np.ndarray:
            enc = self.encoded("tool")
            return select(self.is_type(TOOL), enc.codes, len(enc.dictionary))

        return self.cached("call codes", make)

    def calls(self, tool: Any) -> np.ndarray:
        """Rows that are tool calls of the contract tool ``tool``."""
        return self.calls_coded(tool).value

    def nameless(self) -> np.ndarray:
        """Tool calls whose tool was not recorded (SEMANTICS.md §5): every tool atom
        of a tool is unknown there."""
        return self.cached(("nameless",), lambda: self.is_type(TOOL) & self.isnull("tool"))

    def calls_coded(self, tool: Any) -> CodedColumn:
        """``calls(tool)`` as a coded column (tool codes at tool calls and a lookup table)."""
        key = fields.tool_key(str(tool))

        def make() -> CodedColumn:
            enc = self.encoded("tool")
            lut = np.array([fields.tool_matches(key, v) for v in enc.values] + [False], bool)
            return CodedColumn(self._call_codes(), lut, self.nameless())

        return self.cached(("calls", key), make)

    def col(self, name: str) -> pa.Array:
        """Column ``name`` as one contiguous array (take/filter are faster on it)."""

        def make() -> pa.Array:
            col = self.table.column(name)
            return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()

        return self.cached(("col", name), make)

    def raw(self, name: str) -> tuple[np.ndarray, np.ndarray | None]:
        """A numeric column's values (undefined at nulls) and validity (None: no nulls)."""

        def make() -> tuple[np.ndarray, np.ndarray | None]:
            arr = self.col(name)
            return raw_values(arr, numpy_dtype(arr.type))

        return self.cached(("raw", name), make)

    def isnull(self, name: str) -> np.ndarray:
        def make() -> np.ndarray:
            valid = valid_mask(self.col(name))
            return np.zeros(self.n, dtype=bool) if valid is None else ~valid

        return self.cached(("null", name), make)

    def distinct(self, name: str, rows: np.ndarray, rows_key: Hashable) -> Distinct:
        """The non-null values of string column ``name`` at ``rows``, by distinct value
        (the rows' values are taken and dictionary-encoded: cheaper than encoding the
        whole column when the rows are a few tools' calls or one event type)."""

        def make() -> Distinct:
            at = np.flatnonzero(rows & ~self.isnull(name))
            sub = pc.dictionary_encode(self.col(name).take(pa.array(at)))
            return Distinct(at, np.asarray(sub.indices.to_numpy()), sub.dictionary)

        return self.cached(("distinct", name, rows_key), make)

    def search(self, name: str, regex: str, rows: np.ndarray, rows_key: Hashable) -> np.ndarray:
        """Search of ``regex`` in column ``name`` at ``rows`` (False elsewhere and at nulls)."""
        return self.search3(name, regex, rows, rows_key)[0]

    def search3(
        self, name: str, regex: str, rows: np.ndarray, rows_key: Hashable
    ) -> tuple[np.ndarray, np.ndarray]:
        """(match, ran out of time) of ``regex`` in column ``name`` at ``rows``.

        The regex runs once per distinct value (RE2 in Arrow, or the backtracking
        engine under its time limit, ``regex_hits``).
        """
        compile_regex(regex)  # a configuration error, reported the same way as online

        def make() -> tuple[np.ndarray, np.ndarray]:
            d = self.distinct(name, rows, rows_key)
            out = np.zeros(self.n, dtype=bool)
            late = np.zeros(self.n, dtype=bool)
            if len(d.at):
                hit, timeout = regex_hits(d.values, regex)
                out[d.at] = hit[d.ids]
                late[d.at] = timeout[d.ids]
            return out, late

        return self.cached(("re", name, regex, rows_key), make)

    def parsed(self, rows: np.ndarray, rows_key: Hashable) -> tuple[np.ndarray, list[Any]]:
        """Args of ``rows`` (non-null), each distinct string parsed once: (row → id, objects)."""

        def make() -> tuple[np.ndarray, list[Any]]:
            d = self.distinct("args", rows, rows_key)
            ids = np.full(self.n, -1, dtype=np.int64)
            ids[d.at] = d.ids
            return ids, [json.loads(s) for s in d.values.to_pylist()]

        return self.cached(("args", rows_key), make)

    def per_args(
        self, rows: np.ndarray, rows_key: Hashable, fn: Callable[[Any], Any], dtype: Any
    ) -> np.ndarray:
        """``fn`` of the parsed args at ``rows`` (0 elsewhere), called once per distinct args."""
        ids, objs = self.parsed(rows, rows_key)
        lut = np.array([fn(o) for o in objs] + [0], dtype=dtype)
        return lut[ids]

    def agent_codes(self) -> tuple[tuple[np.ndarray, np.ndarray], list[Any]]:
        """Codes of (agent, target) over one shared dictionary (nulls get their own code)."""

        def make() -> tuple[tuple[np.ndarray, np.ndarray], list[Any]]:
            both = pa.concat_arrays(
                [
                    self.table.column(c).combine_chunks().cast(pa.string())
                    for c in ("agent", "target")
                ]
            )
            enc = pc.dictionary_encode(both)
            names = enc.dictionary.to_pylist()
            codes = to_numpy(enc.indices, len(names)).astype(np.int64)
            return (codes[: self.n], codes[self.n :]), names

        return self.cached("agents", make)

    def numbers(self, name: str) -> np.ndarray:
        """A numeric column as float64, nulls as 0."""

        def make() -> np.ndarray:
            arr = self.col(name)
            if pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
                values, valid = self.raw(name)
                out = values.astype(np.float64)
                if valid is not None:
                    out[~valid] = 0.0
                return out
            return to_numpy(arr, 0).astype(np.float64)

        return self.cached(("num", name), make)

    def numbers_at(self, name: str, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A numeric column at rows ``at``: float64 values (0 at nulls) and null bits."""
        arr = self.col(name)
        if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
            return self.numbers(name)[at], self.isnull(name)[at]
        values, valid = self.raw(name)
        null = np.zeros(len(at), dtype=bool) if valid is None else ~valid[at]
        return np.where(null, 0.0, values[at].astype(np.float64)), null


def regex_hits(values: pa.Array, regex: str) -> tuple[np.ndarray, np.ndarray]:
    """(match, ran out of time) of ``regex`` for each string of ``values`` (null: no match).

    RE2 regexes run in Arrow; a backtracking one runs once per distinct value.
    """
    rx = compile_regex(regex)
    n = len(values)
    if not is_backtracking(rx):
        return to_numpy(pc.match_substring_regex(values, regex), False).astype(bool), np.zeros(
            n, dtype=bool
        )
    enc = pc.dictionary_encode(values)
    got = [matches(rx, v) for v in enc.dictionary.to_pylist()]
    hit_d = np.array([x is True for x in got] + [False], dtype=bool)
    late_d = np.array([x is None for x in got] + [False], dtype=bool)
    ids = to_numpy(pc.fill_null(enc.indices, len(got)), len(got)).astype(np.int64)
    return hit_d[ids], late_d[ids]


def bool_column(value: np.ndarray, unknown: np.ndarray | None = None) -> Column:
    """A bool column, value cleared where unknown."""
    if unknown is None:
        return Column(value.astype(bool, copy=False), np.zeros(len(value), dtype=bool))
    return Column(value & ~unknown, unknown)


def num_column(value: np.ndarray, unknown: np.ndarray | None = None) -> Column:
    """A float64 column, value zeroed where unknown."""
    value = value.astype(np.float64, copy=False)
    if unknown is None or not unknown.any():
        return Column(value, np.zeros(len(value), dtype=bool))
    return Column(np.where(unknown, 0.0, value), unknown)
