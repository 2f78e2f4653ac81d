"""Atoms of SEMANTICS.md §5: the registry, its groundings and the view of a contract.

``registry`` is the one table of atoms; each grounding (``online``,
``columnar``, the guard's ``guard.ground``) has one rule per atom of it,
checked at import. ``view`` says which events a contract sees (§1), for
both engines and the guard.

``Grounder``/``ground_events`` ground one event at a time (the guard);
``ground_columns``/``Grounding``/``Column`` ground a whole events table
(the batch audit). The columnar names are imported on first use, so the
guard does not pay for NumPy and DuckDB.
"""

from __future__ import annotations

from typing import Any

from sponsio_audit.atoms.online import Grounder, Value, ground_events

__all__ = ["Column", "Grounder", "Grounding", "Value", "ground_columns", "ground_events"]

_COLUMNAR = ("Column", "Grounding", "ground_columns")


def __getattr__(name: str) -> Any:
    if name in _COLUMNAR:
        from sponsio_audit.atoms import columnar

        return getattr(columnar, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
