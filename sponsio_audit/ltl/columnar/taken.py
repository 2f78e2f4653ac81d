"""Grounded columns as a contract's view sees them: taken at the view's rows on first use.

``TakenColumns`` restricts the columns of a grounded table to the rows of
one view, each column when first asked for: a coded column (``coded``)
by taking the codes once for every column that shares them, a deferred
one (``at``) by grounding the view's rows only; ``sample`` reads a few
rows without taking the whole view, and ``true_rows`` answers where an
atom coded by one code is true from the view's codes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import numpy.typing as npt

from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.columnar.values import Col, ColumnLike, coded_parts


class TakenColumns(Mapping[Atom, ColumnLike]):
    """``columns`` restricted to ``rows``, each column taken on first use and kept."""

    def __init__(self, columns: Mapping[Atom, ColumnLike], rows: npt.NDArray[np.int64]) -> None:
        self.base = columns
        self.rows = rows
        self.taken: dict[Atom, ColumnLike] = {}
        self.codes: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.by_code: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.no_unknown: dict[Atom, bool] = {}
        self._at: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None

    def __getitem__(self, a: Atom) -> ColumnLike:
        got = self.taken.get(a)
        if got is None:
            c = self.base[a]
            at = getattr(c, "at", None)
            if at is not None:  # grounded at the view's rows only
                got = Col(*at(self.rows))
                self.taken[a] = got
                return got
            known = self._known(a, c)
            unknown = np.zeros(len(self.rows), bool) if known else np.take(c.unknown, self.rows)
            coded = getattr(c, "coded", None)
            value = self.lookup(*coded) if coded is not None else np.take(c.value, self.rows)
            got = Col(value, unknown)
            self.taken[a] = got
        return got

    def sample(self, a: Atom, at: npt.NDArray[np.int64]) -> ColumnLike:
        """Column ``a`` at positions ``at`` of ``rows`` only (from the taken column when
        there is one, else straight from the grounded column)."""
        got = self.taken.get(a)
        if got is not None:
            return Col(np.take(got.value, at), np.take(got.unknown, at))
        c = self.base[a]
        rows = self._rows_at(at)
        ground = getattr(c, "at", None)
        if ground is not None:  # grounded at these rows only
            return Col(*ground(rows))
        coded = getattr(c, "coded", None)
        value = (
            np.take(c.value, rows) if coded is None else self.sample_lookup(coded[0], coded[1], at)
        )
        known = self._known(a, c)
        return Col(value, np.zeros(len(at), bool) if known else np.take(c.unknown, rows))

    def _rows_at(self, at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Table rows at positions ``at`` of ``rows`` (kept: atoms sampled at the same
        positions share them)."""
        if self._at is None or self._at[0] is not at:
            self._at = (at, np.take(self.rows, at))
        return self._at[1]

    def _known(self, a: Atom, c: ColumnLike) -> bool:
        """Whether grounded column ``a`` has no unknown row (checked once per atom)."""
        got = self.no_unknown.get(a)
        if got is None:
            got = c.unknown is None or not c.unknown.any()
            self.no_unknown[a] = got
        return got

    def _taken(self, codes: np.ndarray) -> np.ndarray:
        """``codes`` at the rows, taken once for all columns sharing them."""
        got = self.codes.get(id(codes))
        if got is None:
            got = (codes, np.take(codes, self.rows))  # keeps ``codes`` alive: ids stay unique
            self.codes[id(codes)] = got
        return got[1]

    def true_rows(self, a: Atom) -> npt.NDArray[np.int64] | None:
        """Sorted positions of ``rows`` where atom ``a`` is true, when it is coded by one
        code and never unknown (found once per code, for every atom of that code);
        else None."""
        c = self.base[a]
        coded = getattr(c, "coded", None)
        if coded is None or not self._known(a, c):
            return None
        codes, lut = coded
        hits = np.flatnonzero(lut)
        if len(hits) > 1:
            return None
        if not len(hits):
            return np.zeros(0, dtype=np.int64)
        key = (id(codes), int(hits[0]))
        got = self.by_code.get(key)
        if got is None:  # one code's positions, kept for every atom of that tool
            got = (codes, np.flatnonzero(self._taken(codes) == key[1]))  # keeps ``codes`` alive
            self.by_code[key] = got
        return got[1]

    def lookup(self, codes: np.ndarray, lut: np.ndarray) -> np.ndarray:
        """``lut[codes]`` at the rows, the codes taken once for all columns sharing them
        (an atom's table, or a combination of coded atoms' tables)."""
        taken = self._taken(codes)
        hits = np.flatnonzero(lut)
        if len(hits) == 1:
            return np.asarray(taken == int(hits[0]))  # stays in the codes' dtype
        return np.take(lut, taken)

    def coded_of(self, a: Atom) -> tuple[np.ndarray, np.ndarray, int | None] | None:
        """``(codes, lut, unknown)`` of a coded column (``unknown``: the id of its
        unknown mask, None when it has no unknown row), else None: atoms with the same
        codes and unknown mask combine by their tables (``Evaluator.coded``)."""
        c = self.base[a]
        return coded_parts(c, self._known(a, c))

    def sample_lookup(
        self, codes: np.ndarray, lut: np.ndarray, at: npt.NDArray[np.int64]
    ) -> np.ndarray:
        """``lut[codes]`` at positions ``at`` of the rows only."""
        shared = self.codes.get(id(codes))  # the view's codes, taken already
        taken = np.take(shared[1], at) if shared is not None else np.take(codes, self._rows_at(at))
        return np.take(lut, taken)

    def __iter__(self) -> Iterator[Atom]:
        return iter(self.base)

    def __len__(self) -> int:
        return len(self.base)
