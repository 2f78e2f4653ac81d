"""The atoms of many contracts grounded over one events table, on one or more threads.

The engine and ``bench/evaluate.py`` ground a table's contracts this way:
one ``Grounding`` (its derived columns shared by every atom), one mapping of
columns per view's event types.
"""

from __future__ import annotations

from collections.abc import Sequence

from sponsio_audit.atoms.columnar import Grounded, Grounding
from sponsio_audit.atoms.registry import spec_of
from sponsio_audit.atoms.view import view_types
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.threads import ordered_map

ViewColumns = dict[frozenset[str], dict[Atom, Grounded]]
"""Grounded columns by a view's event types (``view_types``), each holding the atoms of
that view's contracts (they differ in run atoms only, grounded per view)."""


def ground_contracts(g: Grounding, contracts: Sequence[Contract], threads: int = 1) -> ViewColumns:
    """The columns of every atom of ``contracts``, grounded on up to ``threads`` threads.

    On several, the event types (and the tool names, when an atom names a tool) are
    encoded first, one column per thread, as nearly every atom reads them.
    """
    views = [view_types(c) for c in contracts]  # once per contract, not per atom
    cols: ViewColumns = {ts: {} for ts in views}
    pairs = zip(contracts, views, strict=True)
    todo = list(dict.fromkeys((a, ts) for c, ts in pairs for a in c.atoms()))
    if threads > 1 and todo:
        first = ["type"]
        if any(p.name == "t" for a, _ in todo for p in spec_of(a.name, a.args).params):
            first.append("tool")
        ordered_map(g.encoded, first, threads)
    got = ordered_map(lambda job: g.column(*job), todo, threads)
    for (a, ts), col in zip(todo, got, strict=True):
        cols[ts][a] = col
    return cols
