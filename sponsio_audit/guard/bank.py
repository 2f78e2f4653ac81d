"""Many clauses compiled into one step function (the guard's hot path).

A ``Bank`` takes clauses that are either safety (``G ψ``, ψ future-free:
fires at every event where ψ is false now, ``past``) or response shapes
(``live``: fires when the prefix first becomes bad; liveness is read at the
end). Sub-formulas are shared, atoms flow in as locals, and one state list
``state`` holds every operator's memory, so rolling back an event is
restoring a copy of that list.

With ``grounding`` the function also grounds the event itself (``ground``):
``call(tool, args, content, dur)``; otherwise it reads the atom values from
a list in ``index`` order: ``step(values)``. It returns the indices of the
clauses that fire, in clause order (and with ``values=True`` the atom
values too, for the contracts run one by one).

In grounding mode the function is specialised per called tool: ``called``
atoms are constants in the variant for a tool, so most of the formulas fold
away (a call of ``pay`` only evaluates what ``pay`` can change). A variant
is compiled on the first call of a tool that matches its set of tool keys
(at most one per tool named in the contracts, plus one for every other
tool); all variants share one state layout, and a past operator's state
keeps the kind it has in the generic variant (``past.Compiler.skind``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sponsio_audit.atoms.fields import normalise_tool
from sponsio_audit.atoms.online import Permissions
from sponsio_audit.guard.ground import PARAMS, Grounding, Key
from sponsio_audit.guard.live import Obligation, shape
from sponsio_audit.guard.past import LITERALS, Compiler, StepFn
from sponsio_audit.ltl.ast import Always, Formula, is_future_free
from sponsio_audit.ltl.reference import Check
from sponsio_audit.vocab import LIVENESS

_TABLE = 4096  # tool names remembered by the dispatch (the variants are per tool key)


def is_safety(f: Formula) -> bool:
    """``G ψ`` with ψ future-free: offending events are where ψ is false (§4.1)."""
    return isinstance(f, Always) and is_future_free(f.arg)


def fusable(f: Formula) -> bool:
    """A clause a ``Bank`` can run: safety or a response shape."""
    return is_safety(f) or shape(f) is not None


class Bank:
    """Clauses ``formulas`` in one generated function (module doc)."""

    def __init__(
        self,
        formulas: Sequence[Formula],
        index: Mapping[Any, int] | None = None,
        kinds: Mapping[Any, str] | None = None,
        grounding: tuple[Sequence[Any], Permissions, str | None] | None = None,
        values: bool = False,
    ) -> None:
        self.formulas = list(formulas)
        self._index, self._kinds, self._grounding = index, kinds, grounding
        self._values = values and grounding is not None
        self._layout: dict[Any, int] = {}
        self._init: list[Any] = [0]
        self._generic: dict[Formula, str] | None = None
        self.obligations: dict[int, Obligation] = {}
        self._fn, c, g = self._compile(None)
        self._generic = c.node_kinds
        self.source = c.lines  # the generic variant, for reading
        self.state: list[Any] = list(self._init)
        self.atoms: tuple[Any, ...] = g.atoms if g is not None else ()
        self.kinds: dict[Any, str] = dict(c.kinds)
        self._keys = g.keys if g is not None else frozenset()
        self._full = any(full for full, _ in self._keys)
        self._variants: dict[frozenset[Key], StepFn] = {}
        self._table: dict[Any, StepFn] = {}

    def _compile(self, calls: frozenset[Key] | None) -> tuple[StepFn, Compiler, Grounding | None]:
        """The generic function (``calls`` None) or the variant for a call of a tool that
        matches exactly the tool keys ``calls``; all share the state layout."""
        c = Compiler(self._index, self._kinds, self._layout, self._init)
        c.generic = self._generic
        size = len(self._init)
        c.lines.append("i = s[0]; s[0] = i + 1")
        g = Grounding(c, *self._grounding, calls=calls) if self._grounding is not None else None
        conds: list[str] = []
        for k, f in enumerate(self.formulas):
            if isinstance(f, Always) and is_future_free(f.arg):  # is_safety
                x = c.emit(f.arg)
                if x in LITERALS:
                    conds.append(str(x == "False"))
                else:
                    conds.append(f"not {x}" if c.kind[x] == "b" else f"{x} is False")
                continue
            sh = shape(f)
            if sh is None:
                raise ValueError(f"not a bank clause: {f!r}")
            ob = Obligation(c, sh, ("obligation", k), f"f{k}")
            self.obligations.setdefault(k, ob)
            conds.append(f"f{k}" if sh[3] >= 0 else "False")
        if calls is not None and len(self._init) != size:
            raise AssertionError("a variant laid out new state slots")
        c.lines.append("out = []")
        for k, x in enumerate(conds):
            if x != "False":
                c.lines.append(f"out.append({k})" if x == "True" else f"if {x}: out.append({k})")
        if self._values and g is not None:
            c.lines.append(f"return out, ({''.join(n + ', ' for n in g.names)})")
        else:
            c.lines.append("return out")
        params = "v, s" if g is None else PARAMS if calls is None else PARAMS[6:]
        fn, _ = c.build(params, f"bank of {len(self.formulas)}")
        return fn, c, g

    def step(self, values: Sequence[Any]) -> Any:
        """Consume one event given as its atom values in ``index`` order (module doc)."""
        return self._fn(values, self.state)

    def call(self, tool: str | None, args: Any, content: str | None, dur: int | None) -> Any:
        """Consume a call of ``tool`` (grounding mode): run the variant for that tool."""
        if tool is None:
            low = norm = None
        else:
            low = tool.lower()
            norm = normalise_tool(tool) if low.startswith("mcp__") else low
        fn = self._table.get((norm, low) if self._full else norm)
        if fn is None:
            fn = self._variant(norm, low)
        return fn(args, content, dur, self.state)

    def _variant(self, norm: str | None, low: str | None) -> StepFn:
        calls = frozenset(k for k in self._keys if (low if k[0] else norm) == k[1])
        fn = self._variants.get(calls)
        if fn is None:
            fn = self._variants[calls] = self._compile(calls)[0]
        if len(self._table) < _TABLE:
            self._table[(norm, low) if self._full else norm] = fn
        return fn

    def check(self, k: int) -> Check | None:
        """Clause ``k``'s verdict if the trace ended now (None for safety clauses)."""
        ob = self.obligations.get(k)
        return None if ob is None else ob.check(self.state)

    def liveness(self, k: int) -> Check | None:
        """Clause ``k``'s liveness violation open at the end, if any."""
        c = self.check(k)
        return c if c is not None and c.value is False and c.kind == LIVENESS else None

    def reset(self) -> None:
        """Back to the empty trace."""
        self.state = list(self._init)
