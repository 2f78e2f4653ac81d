"""Columnar grounding equals online grounding, atom by atom, on random traces."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.atoms import arg_fields, registry
from sponsio_audit.atoms.columnar import Grounding, ground_columns
from sponsio_audit.atoms.online import Grounder, ground_events
from sponsio_audit.event import EVENT_TYPES, Event
from sponsio_audit.ltl.ast import Atom

from .strategies import ALL_ATOMS, PERMISSIONS, atom_of, table_of, traces


def _check(trs: list[list[Event]], atoms: tuple[Atom, ...], perms: Any, view: Any = None) -> None:
    table = pa.concat_tables([table_of([tr]) for tr in trs])  # one chunk per trace
    cols = ground_columns(table, atoms, perms, view)
    row = 0
    for tr in trs:
        for e, vals in zip(tr, ground_events(atoms, tr, perms, view), strict=True):
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
@given(traces(), ALL_ATOMS, PERMISSIONS, st.booleans())
def test_columnar_equals_online(
    trs: list[list[Event]], atoms: Any, perms: Any, in_duckdb: bool
) -> None:
    """Argument fields read by Python (few distinct args) or by DuckDB (many): the same."""
    below = arg_fields.IN_DUCKDB
    try:
        arg_fields.IN_DUCKDB = 0 if in_duckdb else below
        _check(trs, atoms, perms)
    finally:
        arg_fields.IN_DUCKDB = below


CONTEXT = st.dictionaries(
    st.sampled_from(["env", "k"]),
    st.sampled_from(["prod", "<redacted>", {"a": "<redacted>"}, ["x", "<redacted>"], 5, "5"]),
    max_size=2,
)
CTX_ATOMS = st.tuples(
    *(
        st.builds(Atom, st.just(name), st.tuples(st.sampled_from(["env", "k"]), *more))
        for name, more in (
            ("ctx", [st.sampled_from(["prod", "5", 5])]),
            ("ctx_matches", [st.sampled_from(["^p", "5", "redacted"])]),
            ("ctx_value", []),
        )
    )
)


@settings(max_examples=100)
@given(st.lists(st.one_of(CONTEXT, st.none()), max_size=5), CTX_ATOMS)
def test_context_atoms_agree_on_hidden_context_values(
    updates: list[dict[str, Any] | None], atoms: Any
) -> None:
    """Context updates that record, hide (``<redacted>``, whole or in part) or drop a key."""
    trace = [
        Event("context_update", args=u, agent="a", seq=i)
        if u is not None
        else Event("tool_call", tool="deploy", args={}, agent="a", seq=i)
        for i, u in enumerate(updates)
    ]
    _check([trace], atoms, None)


VIEWS = st.sets(st.sampled_from(EVENT_TYPES)).map(lambda ts: frozenset({"tool_call", *ts}))
"""Event types of a contract's view (with tool calls: the source of the run atom)."""


@settings(max_examples=100)
@given(traces(), st.tuples(*(atom_of(s) for s in registry.ATOMS if s.run)), VIEWS)
def test_columnar_equals_online_over_a_view(
    trs: list[list[Event]], atoms: Any, view: frozenset[str]
) -> None:
    """Run atoms count the view's positions (SEMANTICS.md §1, §5): both groundings."""
    _check(trs, atoms, None, view)


@settings(max_examples=150)
@given(traces(), ALL_ATOMS, st.one_of(st.none(), VIEWS), st.data())
def test_an_atom_grounded_at_some_rows_equals_online(
    trs: list[list[Event]], atoms: Any, view: Any, data: Any
) -> None:
    """A column grounded at the rows read only (``atoms.deferred``: counts, token
    counts, runs over a view), before it is ever grounded whole, gives the online
    grounder's values at those rows, in any order (SEMANTICS.md §5)."""
    table = pa.concat_tables([table_of([tr]) for tr in trs])
    want = [v for tr in trs for v in ground_events(atoms, tr, None, view)]
    keep = data.draw(st.lists(st.booleans(), min_size=len(want), max_size=len(want)))
    picked = np.flatnonzero(np.array(keep, dtype=bool)).tolist()
    rows = np.array(data.draw(st.permutations(picked)), dtype=np.int64)  # per-agent views regroup
    g = Grounding(table)
    for atom in atoms:
        col = g.column(atom, view)
        if not hasattr(col, "at"):
            continue
        value, unknown = col.at(rows)
        assert not value[unknown].any()
        for r, x, u in zip(rows.tolist(), value.tolist(), unknown.tolist(), strict=True):
            w = want[r][atom]
            assert (None if u else x) == (None if w is None else float(w)), (atom, r)


def test_a_run_skips_the_events_outside_the_view() -> None:
    """§5 by hand: calls of a with an LLM turn and a context update between them. In a
    tool view the run goes on through both (1, 2, 3 at the calls); with LLM events in the
    view the response ends it (1, then 1 again); the update is outside both views."""
    a = Event(type="tool_call", tool="a", args={})
    resp = Event(type="llm_response", content="x")
    upd = Event(type="context_update", args={"k": 1})
    trace = [a, resp, a, upd, a]
    atom = Atom("consecutive_count", ("a",))
    tool = frozenset({"tool_call"})
    mixed = frozenset({"tool_call", "llm_response"})
    for view, want in ((tool, [1, 2, 3]), (mixed, [1, 1, 2]), (None, [1, 1, 1])):
        got = [v[atom] for v in ground_events([atom], trace, view=view)]
        col = ground_columns(table_of([trace]), [atom], view=view)[atom]
        assert [got[i] for i in (0, 2, 4)] == want, view
        assert [int(col.value[i]) for i in (0, 2, 4)] == want, view


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
