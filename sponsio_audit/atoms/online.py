"""Grounding one event at a time (the guard, the reference evaluator, tests).

``Grounder(atoms).ground(event)`` gives the value of every atom at the new
position: True, False, an int/float, or None for unknown (SEMANTICS.md §2,
§5). Values at positions whose event is not of an atom's source type follow
the registry docstring: bool event atoms are false, int/number atoms keep
their last value (0 before the first, unknown carried too), state atoms have
their running value.

State lives in a ``Journal`` (one dict of immutable values, every write of
the last event journalled) so ``rollback()`` undoes the last event in O(its
writes): the guard calls it when it blocks an event, which then never happened.

Decisions where SEMANTICS.md is terse (the columnar grounding does the same):

* tool names, fields, numbers, paths: see ``fields`` and ``paths``;
  ``contains(f)`` and ``arg_*`` fields use ``fields.field_value`` (top-level
  key, else a dotted path through nested objects).
* ``<redacted>``, the value an exporter writes for a secret, is a value not
  recorded (SEMANTICS.md §2): a field that is (or lies under) one makes
  ``arg_field_has``, ``arg_eq``, ``arg_length``, ``arg_numeric`` and ``arg_value``
  unknown; a regex over JSON that hides one (``arg_has``, ``count_with``,
  ``arg_field_has`` on an object) is true only by a match between hidden values,
  else unknown (``fields.search_json``); ``arg_paths_within`` is false by a
  recorded path outside, else unknown. What the recorded rest proves stands.
* ``consecutive_count(t)``: the run is over the positions of the contract's
  view (``view``: its event types, ``atoms.view``; None: every event given):
  a position that is not a call of t (an LLM event in a mixed view too) ends
  the run, an event outside the view (an LLM event for a tool contract)
  neither ends nor extends it.
* ``ctx(k, v)``: the latest value of top-level key k of a context_update's
  args, compared as its string form (non-strings as compact JSON) with v.
* ``flow(src, dst)``: a data_write by W makes W carry its own data and adds
  everything W carries to W's store; a data_read by X of ``target`` W adds
  W's store to what X carries; a message or delegation from Y to ``target``
  X adds what Y carries to X. flow is true once dst ≠ src carries src.
* ``delegation_depth()``: every agent starts at 0; a message or delegation
  from A (depth d) to B raises B to max(depth B, d + 1), except when B is A
  or lies on the chain that reached A (a reply does not deepen the chain).
  The value is the depth of the event's agent, or of the target of a
  delegation event.
* value atoms (``arg_value``, ``ctx_value``) and evidence atoms: ``online_terms``.
* ``perm(P)``: P is in the permissions of the event's agent (a mapping
  agent → set) or in the one fixed set; never unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Union

from sponsio_audit.atoms import fields, paths
from sponsio_audit.atoms.online_terms import TermRules
from sponsio_audit.atoms.registry import TOOL, Rules, spec_of
from sponsio_audit.event import Event, args_text
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.ltl.reference import Composite
from sponsio_audit.regexes import compile_regex, matches

Value = Union[bool, int, float, str, Composite, None]
"""An atom's value at one position; None is unknown (str and Composite: value atoms)."""

Permissions = Union[Mapping[str, frozenset[str]], frozenset[str], None]

_ABSENT: Any = object()


class _Ev:
    """One event with the derived values several atoms share, computed once."""

    __slots__ = ("_text", "e", "is_tool", "low", "nameless", "norm")

    def __init__(self, e: Event) -> None:
        self.e = e
        self.is_tool = e.type == TOOL
        self.nameless = self.is_tool and e.tool is None  # SEMANTICS.md §5
        self.low = e.tool.lower() if e.tool is not None else None
        self.norm = fields.normalise_tool(e.tool)
        self._text: Any = _ABSENT

    def calls(self, key: tuple[bool, str]) -> bool:
        return self.is_tool and (self.low if key[0] else self.norm) == key[1]

    @property
    def text(self) -> str | None:
        if self._text is _ABSENT:
            self._text = args_text(self.e.args)
        return self._text


Eval = Callable[[_Ev], Value]


def perm_set(permissions: Permissions, agent: str | None) -> frozenset[str]:
    """The permissions of ``agent``: from the mapping, or the fixed set."""
    if permissions is None:
        return frozenset()
    if isinstance(permissions, Mapping):
        return frozenset(permissions.get(agent, ())) if agent is not None else frozenset()
    return permissions


class Grounder(TermRules):
    """Grounds ``atoms`` on a stream of events; ``rollback`` undoes the last one. ``view``:
    the event types of the contract's view, whose positions run atoms count (None: all)."""

    def __init__(
        self,
        atoms: Sequence[Atom],
        permissions: Permissions = None,
        view: frozenset[str] | None = None,
    ) -> None:
        self.atoms: tuple[Atom, ...] = tuple(dict.fromkeys(atoms))
        self.permissions = permissions
        self.view = view
        super().__init__()
        self._evals: list[tuple[Atom, Eval]] = [(a, self._build(a)) for a in self.atoms]

    # ------------------------------------------------------------ grounding

    def ground(self, event: Event) -> dict[Atom, Value]:
        """The value of every atom at ``event``, which becomes the next position."""
        self.track(event)
        ev = _Ev(event)
        return {atom: fn(ev) for atom, fn in self._evals}

    # ------------------------------------------------------------ atoms

    def _build(self, atom: Atom) -> Eval:
        spec = spec_of(atom.name, atom.args)
        a: tuple[Any, ...] = atom.args
        if spec.variadic:  # the last parameter takes the remaining arguments as one tuple
            n = len(spec.params) - 1
            a = (*a[:n], a[n:])
        return RULES.of(atom.name)(self, atom, *a)

    def _keep_last(self, atom: Atom, at: Callable[[_Ev], bool], value: Eval) -> Eval:
        def fn(ev: _Ev) -> Value:
            if at(ev):
                self._set(atom, value(ev))
            return self._get(atom, 0)

        return fn

    def _b_called(self, atom: Atom, t: str) -> Eval:
        key = fields.tool_key(str(t))
        return lambda ev: None if ev.nameless else ev.calls(key)

    def _b_called_any(self, atom: Atom) -> Eval:
        return lambda ev: ev.is_tool

    def _b_count(self, atom: Atom, t: str) -> Eval:
        key = fields.tool_key(str(t))

        def fn(ev: _Ev) -> Value:
            old = self._get(atom, 0)
            if ev.nameless and old is not None:
                self._set(atom, None)
            elif ev.calls(key) and old is not None:
                self._set(atom, old + 1)
            return self._get(atom, 0)

        return fn

    def _b_consecutive_count(self, atom: Atom, t: str) -> Eval:
        key = fields.tool_key(str(t))
        seen = self.view

        def fn(ev: _Ev) -> Value:
            old = self._get(atom, 0)
            if seen is not None and ev.e.type not in seen:
                return old  # not a position of the view: the run goes on through it
            if ev.nameless:
                run: Value = None  # the run may go on through a call of t
            elif ev.calls(key):
                run = None if old is None else old + 1
            else:
                run = 0
            if run != old:
                self._set(atom, run)
            return run

        return fn

    def _on_args(self, t: Any, then: Callable[[_Ev], bool | None]) -> Eval:
        """A bool atom at calls of t that is unknown when the args are missing."""
        key = fields.tool_key(str(t))

        def fn(ev: _Ev) -> Value:
            if ev.nameless:
                return None
            if not ev.calls(key):
                return False
            if ev.e.args is None:
                return None
            return then(ev)

        return fn

    def _b_arg_has(self, atom: Atom, t: str, regex: str) -> Eval:
        rx = compile_regex(str(regex))
        return self._on_args(t, lambda ev: fields.search_args(rx, ev.e.args, ev.text))

    def _b_arg_field_has(self, atom: Atom, t: str, f: str, regex: str) -> Eval:
        rx = compile_regex(str(regex))

        def then(ev: _Ev) -> bool | None:
            v = fields.field_value(ev.e.args, str(f))
            if v is fields.MISSING or v is fields.HIDDEN:
                return False if v is fields.MISSING else None
            text = fields.text_form(v)
            return fields.search_json(rx, text) if fields.opaque(v) else matches(rx, text)

        return self._on_args(t, then)

    def _b_arg_eq(self, atom: Atom, t: str, f: str, value: Any) -> Eval:
        equal = fields.equal_to(value)

        def then(ev: _Ev) -> bool | None:
            v = fields.field_value(ev.e.args, str(f))
            if v is fields.MISSING:
                return False
            return None if fields.opaque(v) else equal(fields.text_form(v))

        return self._on_args(t, then)

    def _b_arg_paths_within(self, atom: Atom, t: str, prefixes: Iterable[Any]) -> Eval:
        norms = [paths.normalise(str(p)) for p in prefixes]

        def then(ev: _Ev) -> bool | None:  # a hidden value may be a path elsewhere
            return paths.paths_within(ev.e.args, norms) and (
                None if fields.hides_args(ev.e.args, ev.text) else True
            )

        return self._on_args(t, then)

    def _b_output_has(self, atom: Atom, t: str, regex: str) -> Eval:
        key = fields.tool_key(str(t))
        rx = compile_regex(str(regex))

        def fn(ev: _Ev) -> Value:
            if ev.nameless:
                return None
            if not ev.calls(key):
                return False
            c = ev.e.content
            return None if c is None else matches(rx, c)

        return fn

    def _b_perm(self, atom: Atom, p: str) -> Eval:
        return lambda ev: str(p) in perm_set(self.permissions, ev.e.agent)

    def _b_contains(self, atom: Atom, f: str) -> Eval:
        def fn(ev: _Ev) -> Value:
            e = ev.e
            if (
                e.type == "data_write"
                and not self._get(atom, False)
                and fields.field_value(e.args, str(f)) is not fields.MISSING
            ):
                self._set(atom, True)
            return self._get(atom, False)

        return fn

    def _b_flow(self, atom: Atom, src: str, dst: str) -> Eval:
        self._flow = True
        s, d = str(src), str(dst)
        return lambda ev: s != d and s in self.carries(d)

    def _text_atom(self, kind: str, regex: str, attr: str) -> Eval:
        rx = compile_regex(str(regex))

        def fn(ev: _Ev) -> Value:
            if ev.e.type != kind:
                return False
            text = getattr(ev.e, attr)
            return None if text is None else matches(rx, text)

        return fn

    def _b_llm_output_contains(self, atom: Atom, regex: str) -> Eval:
        return self._text_atom("llm_response", regex, "content")

    def _b_llm_input_contains(self, atom: Atom, regex: str) -> Eval:
        return self._text_atom("llm_request", regex, "prompt")

    def _b_system_prompt_present(self, atom: Atom) -> Eval:
        def fn(ev: _Ev) -> Value:
            e = ev.e
            if e.type != "llm_request":
                return False
            return None if e.prompt is None else bool(e.system_prompt)

        return fn

    def _b_context_length(self, atom: Atom) -> Eval:
        return self._keep_last(
            atom,
            lambda ev: ev.e.type == "llm_request",
            lambda ev: None if ev.e.prompt is None else len(ev.e.prompt),
        )

    def _b_token_count(self, atom: Atom, kind: str) -> Eval:
        k = fields.check_token_kind(kind)

        def fn(ev: _Ev) -> Value:
            e = ev.e
            if e.type == "llm_response":
                old = self._get(atom, 0)
                if old is not None:
                    n = fields.token_value(k, e.tokens_in, e.tokens_out, e.tokens_total)
                    self._set(atom, None if n is None else old + n)
            return self._get(atom, 0)

        return fn

    def _b_latency_exceeds(self, atom: Atom, t: str, ms: Any) -> Eval:
        key = fields.tool_key(str(t))
        limit = float(ms) * 1e6

        def fn(ev: _Ev) -> Value:
            if ev.nameless:
                return None
            if not ev.calls(key):
                return False
            d = ev.e.duration_ns
            return None if d is None else float(d) > limit

        return fn

    def _b_count_with(self, atom: Atom, t: str, regex: str) -> Eval:
        key = fields.tool_key(str(t))
        rx = compile_regex(str(regex))

        def fn(ev: _Ev) -> Value:
            if ev.nameless:
                self._set(atom, None)
            elif ev.calls(key):
                old = self._get(atom, 0)
                if old is not None:
                    args = ev.e.args
                    hit = None if args is None else fields.search_args(rx, args, ev.text)
                    if hit is None:  # args missing or the regex ran out of time
                        self._set(atom, None)
                    elif hit:
                        self._set(atom, old + 1)
            return self._get(atom, 0)

        return fn

    def _field_atom(self, atom: Atom, t: str, f: str, conv: Callable[[Any], Value]) -> Eval:
        key = fields.tool_key(str(t))

        def value(ev: _Ev) -> Value:
            if ev.nameless or ev.e.args is None:
                return None
            v = fields.field_value(ev.e.args, str(f))
            return None if v is fields.MISSING or v is fields.HIDDEN else conv(v)

        return self._keep_last(atom, lambda ev: ev.nameless or ev.calls(key), value)

    def _b_arg_length(self, atom: Atom, t: str, f: str) -> Eval:
        return self._field_atom(atom, t, f, fields.arg_length)

    def _b_arg_numeric(self, atom: Atom, t: str, f: str) -> Eval:
        return self._field_atom(atom, t, f, fields.numeric)

    def _ctx_atom(self, k: str, test: Callable[[str], bool | None]) -> Eval:
        self._ctx = True

        def fn(ev: _Ev) -> Value:
            cur = self._get(("ctx", k), _ABSENT)
            return None if cur is _ABSENT or cur is fields.HIDDEN else test(cur)

        return fn

    def _b_ctx(self, atom: Atom, k: str, v: Any) -> Eval:
        want = fields.arg_text(v)
        return self._ctx_atom(str(k), lambda cur: cur == want)

    def _b_ctx_matches(self, atom: Atom, k: str, regex: str) -> Eval:
        rx = compile_regex(str(regex))
        return self._ctx_atom(str(k), lambda cur: matches(rx, cur))

    def _b_delegation_depth(self, atom: Atom) -> Eval:
        self._depth = True

        def fn(ev: _Ev) -> Value:
            e = ev.e
            return self.depth(depth_subject(e.type, e.agent, e.target))

        return fn


RULES: Rules[Callable[..., Eval]] = Rules("online", prefix="b_")
"""One builder per atom: ``Grounder._b_<atom>(grounder, atom, *args)`` → its evaluator."""
for _name in dir(Grounder):
    if _name.startswith("_b_"):
        RULES.rule(getattr(Grounder, _name))
RULES.complete()


def depth_subject(kind: str, agent: str | None, target: str | None) -> str | None:
    """Whose depth ``delegation_depth()`` reports: a delegation's target, else the agent."""
    return target if kind == "delegation" and target is not None else agent


def ground_events(
    atoms: Sequence[Atom],
    events: Iterable[Event],
    permissions: Permissions = None,
    view: frozenset[str] | None = None,
) -> list[dict[Atom, Value]]:
    """Ground one trace: the valuation at every event, in order (``view``: ``Grounder``)."""
    g = Grounder(atoms, permissions, view)
    return [g.ground(e) for e in events]
