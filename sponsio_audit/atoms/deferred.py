"""Atom columns grounded at the rows a contract reads, not at every row (``Deferred``).

A guarantee ``G(p → ψ)`` reads ψ's atoms only where p may hold
(``ltl.columnar.sparse``) and a view reads only its own rows, so a running
count grounded over every row of the table costs more than the rows read.
A ``Deferred`` column is one function ``rows_of(rows)`` of table rows in
any order (a per-agent view regroups them; None: every row); the whole
column (``value``/``unknown``) is ``rows_of(None)``, computed on first
use, so a column read at some rows equals the whole column there by
construction: every row's value comes from the same arithmetic, whichever
rows are asked for.

The running atoms here (``count``, ``token_count``, a run over a view) are
differences of prefix sums read at the rows asked for (``prefix``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

Sampled = tuple[np.ndarray, np.ndarray]
"""(value, unknown) at some rows; value zero (False) where unknown."""
Rows = np.ndarray | None
"""Table rows (any order, each row's value computed on its own), or None for every row."""


@dataclass(frozen=True, eq=False)
class Deferred:
    """An atom column over ``n`` rows, grounded at the rows asked for (``at``) or whole."""

    n: int
    rows_of: Callable[[Rows], Sampled]
    """(value, unknown) at table rows (None: every row)."""

    coded = None
    """Never coded (``ColumnLike``): sampled by ``at``."""

    @cached_property
    def whole(self) -> Sampled:
        """Every row's (value, unknown), grounded once when something reads them."""
        return self.rows_of(None)

    @property
    def value(self) -> np.ndarray:
        """The whole column's values (``ColumnLike``)."""
        return self.whole[0]

    @property
    def unknown(self) -> np.ndarray:
        """The whole column's unknown mask (``ColumnLike``)."""
        return self.whole[1]

    def at(self, rows: np.ndarray) -> Sampled:
        """(value, unknown) at table ``rows`` (from the whole column once it exists)."""
        if "whole" in self.__dict__:
            value, unknown = self.whole
            return np.take(value, rows), np.take(unknown, rows)
        return self.rows_of(rows)


def prefix(values: np.ndarray) -> np.ndarray:
    """p[k] = sum of values[:k], for k in [0, len]: integer for bools and integers."""
    kind = values.dtype.kind
    dtype = np.int32 if kind == "b" and len(values) < 2**31 else np.float64
    out = np.zeros(len(values) + 1, dtype=np.int64 if kind in "iu" else dtype)
    np.cumsum(values, out=out[1:])
    return out


def at(x: np.ndarray, rows: Rows, shift: int = 0) -> np.ndarray:
    """``x[r + shift]`` at each of ``rows`` (None: every row, as a slice)."""
    if rows is None:
        return x[shift : shift + len(x) - 1] if shift else x
    return np.take(x, rows + shift if shift else rows)


def since_start(p: np.ndarray, rows: Rows, start: np.ndarray) -> np.ndarray:
    """Sum over [trace start, r] at each of ``rows`` from prefix sums ``p``."""
    return at(p, rows, 1) - np.take(p, at(start, rows))


def known_value(value: np.ndarray, unknown: np.ndarray) -> Sampled:
    """``(value, unknown)`` as a float64 column: zero where unknown."""
    value = value.astype(np.float64, copy=False)
    if unknown.any():
        value = np.where(unknown, 0.0, value)
    return value, unknown


def running(
    values: np.ndarray, unknown: np.ndarray, start: np.ndarray
) -> Callable[[Rows], Sampled]:
    """``rows_of`` of a running sum per trace of ``values``, unknown from the first
    ``unknown`` row of the trace on: count(t), count_with."""
    p = prefix(values)
    u = prefix(unknown) if unknown.any() else None

    def rows_of(rows: Rows) -> Sampled:
        value = since_start(p, rows, start)
        if u is None:
            return value.astype(np.float64, copy=False), np.zeros(len(value), dtype=bool)
        return known_value(value, since_start(u, rows, start) > 0)

    return rows_of


def running_over(
    source: np.ndarray, values: np.ndarray, missing: np.ndarray, start: np.ndarray
) -> Callable[[Rows], Sampled]:
    """``running`` of ``values``/``missing`` given at the ``source`` rows only (one per
    source row, in row order): the sums run over the few source rows."""
    k = prefix(source)  # source rows before each row
    p = prefix(values)
    u = prefix(missing) if missing.any() else None

    def rows_of(rows: Rows) -> Sampled:
        hi, lo = at(k, rows, 1), np.take(k, at(start, rows))
        total = np.take(p, hi) - np.take(p, lo)
        if u is None:
            return total, np.zeros(len(total), dtype=bool)
        return known_value(total, (np.take(u, hi) - np.take(u, lo)) > 0)

    return rows_of


def run_in_view(
    calls: np.ndarray, ends: np.ndarray, start: np.ndarray
) -> Callable[[Rows], Sampled]:
    """``rows_of`` of the run of ``calls`` ending at each row: the calls since the last
    ``ends`` row (a view row that is not a call) of the trace, or since its start."""
    c = prefix(calls)
    e = prefix(ends)
    hits = np.flatnonzero(ends)

    def rows_of(rows: Rows) -> Sampled:
        before = at(e, rows, 1)  # ends rows at or before r
        first = at(start, rows)
        last = np.take(hits, np.maximum(before - 1, 0)) if len(hits) else first
        base = np.where((before > 0) & (last >= first), last + 1, first)
        value = (at(c, rows, 1) - np.take(c, base)).astype(np.float64)
        return value, np.zeros(len(value), dtype=bool)

    return rows_of
