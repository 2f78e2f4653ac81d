"""Columnar grounding equals online grounding, atom by atom, on random traces."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.atoms.columnar import ground_columns
from sponsio_audit.atoms.online import Grounder, ground_events
from sponsio_audit.event import Event
from sponsio_audit.ltl.ast import Atom

from .strategies import ALL_ATOMS, PERMISSIONS, table_of, traces


def _check(trs: list[list[Event]], atoms: tuple[Atom, ...], perms: Any) -> None:
    table = pa.concat_tables([table_of([tr]) for tr in trs])  # one chunk per trace
    cols = ground_columns(table, atoms, perms)
    row = 0
    for tr in trs:
        for e, vals in zip(tr, ground_events(atoms, tr, perms), strict=True):
            for atom in atoms:
                col, want = cols[atom], vals[atom]
                x = col.value[row]
                got = None if col.unknown[row] else x.item() if hasattr(x, "item") else x
                if want is not None:
                    want = float(want) if col.value.dtype.kind == "f" else want
                assert got == want and type(got) is type(want), (atom, row, e, got, want)
            row += 1
    for col in cols.values():
        assert not col.value[col.unknown].any()


@settings(max_examples=200)
@given(traces(), ALL_ATOMS, PERMISSIONS)
def test_columnar_equals_online(trs: list[list[Event]], atoms: Any, perms: Any) -> None:
    _check(trs, atoms, perms)


@settings(max_examples=100)
@given(traces(max_traces=1), ALL_ATOMS, PERMISSIONS, st.lists(st.booleans(), max_size=8))
def test_rollback_is_as_if_the_event_never_happened(
    trs: list[list[Event]], atoms: Any, perms: Any, blocked: list[bool]
) -> None:
    """Grounding with blocked events rolled back equals grounding the events let through."""
    events = trs[0]
    keep = [e for i, e in enumerate(events) if not (i < len(blocked) and blocked[i])]
    g = Grounder(atoms, perms)
    got = []
    for i, e in enumerate(events):
        vals = g.ground(e)
        if i < len(blocked) and blocked[i]:
            g.rollback()
        else:
            got.append(vals)
    assert got == ground_events(atoms, keep, perms)
