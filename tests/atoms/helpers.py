"""Ground a hand-written trace with both groundings and return the (agreed) values."""

from __future__ import annotations

from typing import Any

from sponsio_audit.atoms.columnar import ground_columns
from sponsio_audit.atoms.online import ground_events
from sponsio_audit.event import Event
from sponsio_audit.ltl.ast import Atom

from .strategies import table_of


def values(text: str, events: list[Event], permissions: Any = None) -> list[Any]:
    """Values of the atom written ``name(a, b)`` (args split on ", ") at every event.

    Online and columnar must agree; numbers come back as they are (ints stay ints).
    """
    name, _, rest = text.partition("(")
    args: tuple[Any, ...] = tuple(a for a in rest.rstrip(")").split(", ") if a)
    return values_of(Atom(name, args), events, permissions)


def values_of(atom: Atom, events: list[Event], permissions: Any = None) -> list[Any]:
    """Like ``values`` for an ``Atom`` (non-string arguments)."""
    events = [
        Event(**{**e.__dict__, "trace_id": e.trace_id or "t", "seq": i})
        for i, e in enumerate(events)
    ]
    online = [v[atom] for v in ground_events([atom], events, permissions)]
    col = ground_columns(table_of([events]), [atom], permissions)[atom]
    columnar = [
        None if u else v.item() if hasattr(v, "item") else v
        for v, u in zip(col.value, col.unknown, strict=True)
    ]
    assert columnar == [
        None if v is None else (float(v) if col.value.dtype.kind == "f" else v) for v in online
    ]
    return online


def call(tool: str | None, args: Any = None, **kw: Any) -> Event:
    """A tool_call event."""
    return Event(type="tool_call", tool=tool, args=args, **kw)
