"""Views as the evaluator sees them: the rows one contract sees, as segments.

Which rows a contract sees (SEMANTICS.md §1: its event types, its agent,
per-agent regrouping) is decided by ``atoms.view``; this module holds the
layout that decision produces and that the evaluator and the result table
read, and samples grounded columns at it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.columnar.segments import IntArray, Segments
from sponsio_audit.ltl.columnar.taken import TakenColumns
from sponsio_audit.ltl.columnar.values import ColumnLike


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


def view_columns(columns: Mapping[Atom, ColumnLike], view: View) -> Mapping[Atom, ColumnLike]:
    """Grounded columns sampled at the view's rows, each atom on first use (as they
    are when the view is every row of the table)."""
    rows = view.rows
    first = next(iter(columns.values()), None)
    if first is not None and len(rows) == _length(first) and bool(np.all(np.diff(rows) == 1)):
        return columns
    return TakenColumns(columns, rows)


def _length(c: ColumnLike) -> int:
    """Rows of a grounded column, without grounding a deferred one whole (its ``n``)."""
    n = getattr(c, "n", None)
    return len(c.value) if n is None else int(n)
