"""The journalled state of the online grounder, and the shared state trackers.

Values are immutable (ints, strings, frozensets) and every write of the last
event is journalled, so undoing that event costs O(its writes).
Trackers hold state several atoms read: what each agent carries (``flow``),
the latest context values (``ctx``) and delegation depths; the rules are in
the ``online`` module docstring.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from sponsio_audit.atoms import fields
from sponsio_audit.event import Event

_ABSENT: Any = object()


class Journal:
    """State of one trace with a one-event undo; subclasses switch trackers on."""

    def __init__(self, flow: bool = False, ctx: bool = False, depth: bool = False) -> None:
        self._state: dict[Hashable, Any] = {}
        self._journal: list[tuple[Hashable, Any]] = []
        self._flow, self._ctx, self._depth = flow, ctx, depth

    def _get(self, key: Hashable, default: Any = None) -> Any:
        return self._state.get(key, default)

    def _set(self, key: Hashable, value: Any) -> None:
        self._journal.append((key, self._state.get(key, _ABSENT)))
        self._state[key] = value

    def rollback(self) -> None:
        """Undo the state changes of the last ``ground`` (only one level)."""
        for key, old in reversed(self._journal):
            if old is _ABSENT:
                del self._state[key]
            else:
                self._state[key] = old
        self._journal.clear()

    def reset(self) -> None:
        """Forget every event: the next ``ground`` is position 0 of a new trace."""
        self._state.clear()
        self._journal.clear()

    def track(self, event: Event) -> None:
        """Start a new event: clear the journal and run the trackers switched on."""
        self._journal.clear()
        if self._flow:
            self._track_flow(event)
        if self._ctx:
            self._track_ctx(event)
        if self._depth:
            self._track_depth(event)

    def carries(self, agent: str | None) -> frozenset[str | None]:
        """The agents whose written data ``agent`` has received (``flow``)."""
        return self._get(("carry", agent), frozenset())

    def depth(self, agent: str | None) -> int:
        """The current delegation depth of ``agent`` (0 when never reached)."""
        return self._get(("depth", agent), 0)

    def _track_flow(self, e: Event) -> None:
        carry = ("carry", e.agent)
        if e.type == "data_write":
            mine = self._get(carry, frozenset()) | {e.agent}
            self._set(carry, mine)
            store = ("store", e.agent)
            self._set(store, self._get(store, frozenset()) | mine)
        elif e.type == "data_read" and e.target is not None:
            got = self._get(("store", e.target), frozenset())
            if got:
                self._set(carry, self._get(carry, frozenset()) | got)
        elif e.type in ("message", "delegation") and e.target is not None:
            got = self._get(carry, frozenset())
            if got:
                dst = ("carry", e.target)
                self._set(dst, self._get(dst, frozenset()) | got)

    def _track_ctx(self, e: Event) -> None:
        if e.type == "context_update" and isinstance(e.args, dict):
            for key, value in e.args.items():
                if fields.hidden(value):  # the exporter hid it: ctx atoms of key are unknown
                    self._set(("ctx", key), fields.HIDDEN)
                    self._set(("ctxv", key), None)
                    continue
                self._set(("ctx", key), fields.text_form(value))
                self._set(("ctxv", key), fields.term_value(value))  # ctx_value

    def _track_depth(self, e: Event) -> None:
        if e.type not in ("message", "delegation") or e.target is None:
            return
        src, dst = e.agent, e.target
        node: Any = src
        while node is not None:  # dst on the chain that reached src: a reply
            if node == dst:
                return
            node = self._get(("parent", node))
        d = self._get(("depth", src), 0) + 1
        if d > self._get(("depth", dst), 0):
            self._set(("depth", dst), d)
            self._set(("parent", dst), src)
