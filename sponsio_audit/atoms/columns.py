"""Derived columns of one events table, shared by every atom of the columnar grounding.

``Columns`` dictionary-encodes the string columns it is asked about once
(tool names, event types, agents are few distinct values), runs each regex
with Arrow's RE2 once per (column, regex, rows), and parses each distinct
args string once per set of rows; everything is cached, so grounding many
atoms costs little more than grounding one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import fields, scans
from .online import Permissions


@dataclass(frozen=True)
class Column:
    """An atom over all rows: ``value`` (bool or float64) and ``unknown`` (bool).

    ``value`` is False/0 wherever ``unknown`` is True.
    """

    value: np.ndarray
    unknown: np.ndarray


def to_numpy(arr: pa.Array | pa.ChunkedArray, fill: Any) -> np.ndarray:
    """A column as NumPy, nulls replaced by ``fill``."""
    return np.asarray(pc.fill_null(arr, fill).to_numpy(zero_copy_only=False))


class Columns:
    """Derived columns of one events table, each computed once and cached."""

    def __init__(self, table: pa.Table, permissions: Permissions = None) -> None:
        self.table = table
        self.n = table.num_rows
        self.permissions = permissions
        self._cache: dict[Hashable, Any] = {}
        ids = table.column("trace_id")
        flags = np.ones(self.n, dtype=bool)
        if self.n > 1:
            flags[1:] = to_numpy(pc.not_equal(ids.slice(1), ids.slice(0, self.n - 1)), True)
        self.start = scans.starts_from_flags(flags)

    # ------------------------------------------------------------ shared columns

    def cached(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """``make()`` once per ``key``, then from the cache."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def _encoded(self, name: str) -> tuple[np.ndarray, list[Any]]:
        """Dictionary codes of a string column (nulls get code len(dictionary))."""

        def make() -> tuple[np.ndarray, list[Any]]:
            enc = pc.dictionary_encode(self.table.column(name).combine_chunks())
            values = enc.dictionary.to_pylist()
            return to_numpy(enc.indices, len(values)).astype(np.int64), values

        return self.cached(("enc", name), make)

    def where_value(self, name: str, test: Callable[[Any], bool]) -> np.ndarray:
        """Rows whose string ``name`` passes ``test`` (called once per distinct value)."""
        codes, values = self._encoded(name)
        lut = np.array([bool(test(v)) for v in [*values, None]], dtype=bool)
        return lut[codes]

    def is_type(self, kind: str) -> np.ndarray:
        return self.cached(("type", kind), lambda: self.where_value("type", lambda v: v == kind))

    def calls(self, tool: Any) -> np.ndarray:
        """Rows that are tool calls of the contract tool ``tool``."""
        key = fields.tool_key(str(tool))

        def make() -> np.ndarray:
            hit = self.where_value("tool", lambda v: fields.tool_matches(key, v))
            return hit & self.is_type("tool_call")

        return self.cached(("calls", key), make)

    def col(self, name: str) -> pa.Array:
        """Column ``name`` as one contiguous array (take/filter are faster on it)."""
        return self.cached(("col", name), lambda: self.table.column(name).combine_chunks())

    def isnull(self, name: str) -> np.ndarray:
        return self.cached(
            ("null", name), lambda: to_numpy(pc.is_null(self.table.column(name)), True)
        )

    def subset(
        self, name: str, rows: np.ndarray, rows_key: Hashable
    ) -> tuple[np.ndarray, pa.Array]:
        """The non-null values of column ``name`` at ``rows``: (row indices, values)."""

        def make() -> tuple[np.ndarray, pa.Array]:
            at = np.flatnonzero(rows & ~self.isnull(name))
            return at, self.col(name).take(pa.array(at))

        return self.cached(("subset", name, rows_key), make)

    def search(self, name: str, regex: str, rows: np.ndarray, rows_key: Hashable) -> np.ndarray:
        """RE2 search of ``regex`` in column ``name`` at ``rows`` (False elsewhere and at nulls)."""
        fields.compile_regex(regex)  # a configuration error, reported the same way as online

        def make() -> np.ndarray:
            out = np.zeros(self.n, dtype=bool)
            at, sub = self.subset(name, rows, rows_key)
            if len(at):
                out[at] = to_numpy(pc.match_substring_regex(sub, regex), False)
            return out

        return self.cached(("re", name, regex, rows_key), make)

    def parsed(self, rows: np.ndarray, rows_key: Hashable) -> tuple[np.ndarray, list[Any]]:
        """Args of ``rows`` (non-null), each distinct string parsed once: (row → id, objects)."""

        def make() -> tuple[np.ndarray, list[Any]]:
            at, sub = self.subset("args", rows, rows_key)
            ids = np.full(self.n, -1, dtype=np.int64)
            if not len(at):
                return ids, []
            enc = pc.dictionary_encode(sub)
            ids[at] = enc.indices.to_numpy(zero_copy_only=False)
            return ids, [json.loads(s) for s in enc.dictionary.to_pylist()]

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
        return self.cached(
            ("num", name), lambda: to_numpy(self.table.column(name), 0).astype(np.float64)
        )


def bool_column(value: np.ndarray, unknown: np.ndarray | None = None) -> Column:
    """A bool column, value cleared where unknown."""
    if unknown is None:
        return Column(value.astype(bool), np.zeros(len(value), dtype=bool))
    return Column(value & ~unknown, unknown)


def num_column(value: np.ndarray, unknown: np.ndarray | None = None) -> Column:
    """A float64 column, value zeroed where unknown."""
    value = value.astype(np.float64)
    if unknown is None:
        return Column(value, np.zeros(len(value), dtype=bool))
    return Column(np.where(unknown, 0.0, value), unknown)
