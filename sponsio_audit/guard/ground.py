"""The guard's grounder: every atom's value at a ``tool_call`` event, as generated code.

The guard only ever appends ``tool_call`` events, so the online grounder
(``atoms.online.Grounder``) is specialised once per guard into straight-line
Python: the tool name is normalised once per event, regexes are RE2-compiled
once, the args' JSON text is built at most once and only when a matching
call needs it, and state atoms (``count``, ``consecutive_count``,
``count_with``, ``arg_length``, ``arg_numeric``) keep their value in a slot
of the caller's state list, so rolling back is restoring that list.

An atom whose source types (``atoms.registry``) do not include ``tool_call``
never changes on such a stream: its value is that of the online grounder on
one probe event of the guard's agent (``perm``, ``contains``, ``flow``, LLM
atoms, ``ctx``, ``delegation_depth``), and it is folded in as a constant.
``tests/guard/test_fast.py`` holds ``ToolGrounder`` against ``Grounder``.
Every event the guard sees is a tool call, a position of any tool contract's
view (SEMANTICS.md §1), so a run (``consecutive_count``) counts tool calls
only, as the audit's run does for that view (``atoms.view``).

The emitted lines read the locals ``tool``, ``args``, ``content``, ``dur``
and the state list ``s`` and bind each atom to a local (``Compiler.terms``)
with its kind (``b`` bool, ``k`` bool or unknown, ``i`` int, ``a`` any).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sponsio_audit.atoms import fields, paths
from sponsio_audit.atoms.online import Grounder, Permissions
from sponsio_audit.atoms.registry import ATOMS, TOOL, AtomSpec, Rules, canonical_name, spec_of
from sponsio_audit.event import Event, args_text
from sponsio_audit.guard.past import Compiler
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.regexes import compile_regex, is_backtracking, is_literal, matches

_U: Any = object()  # the args text is not built yet
_HIDES = "(_HID in text or len(args) == 1 and _unparsed(args))"
"""Code: the args leave values out (``fields.hides_args``), with ``text`` built."""
Key = tuple[bool, str]  # fields.tool_key
PARAMS = "tool, args, content, dur, s"


class Grounding:
    """Emit into ``c`` the lines that bind the value of every atom of ``atoms``."""

    def __init__(
        self,
        c: Compiler,
        atoms: Sequence[Atom],
        permissions: Permissions,
        agent: str | None,
        calls: frozenset[Key] | None = None,
    ) -> None:
        self.c = c
        self.atoms: tuple[Atom, ...] = tuple(dict.fromkeys(atoms))
        self.calls = calls
        self._keys: dict[Key, str] = {}
        self._text = False
        c.consts.update(
            _U=_U,
            _MISSING=fields.MISSING,
            _HIDDEN=fields.HIDDEN,
            _HID=fields.HIDDEN_TEXT,
            _opaque=fields.opaque,
            _search_json=fields.search_json,
            _search_args=fields.search_args,
            _unparsed=fields.unparsed,
            _args_text=args_text,
            _field=fields.field_value,
            _text_form=fields.text_form,
            _numeric=fields.numeric,
            _normalise=fields.normalise_tool,
            _paths_within=paths_within,
        )
        head = len(c.lines)
        if calls is None:
            c.lines += [
                "if tool is None: low = norm = None",
                "else:",
                "    low = tool.lower()",
                "    norm = _normalise(tool) if low.startswith('mcp__') else low",
            ]
        constant = [a for a in self.atoms if TOOL not in spec_of(a.name, a.args).sources]
        probe = Grounder(constant, permissions).ground(Event(TOOL, agent=agent))
        for a in self.atoms:
            if a in probe:
                self._constant(a, probe[a])
            else:
                self._emit(a, canonical_name(a.name))
        if self._text:
            c.lines.insert(head, "text = _U")
        self.names = [c.terms[a] for a in self.atoms]
        self.keys = frozenset(self._keys)

    def _bind(self, a: Atom, name: str, kind: str) -> None:
        self.c.terms[a] = name
        self.c.kind[name] = kind
        self.c.kinds[a] = kind

    def _constant(self, a: Atom, value: Any) -> None:
        if value is None or isinstance(value, bool):
            self._bind(a, repr(value), "k" if value is None else "b")
        else:
            kind = "i" if isinstance(value, int) else "a"
            self._bind(a, self.c.const(value), kind)

    def _calls(self, t: Any) -> str:
        """The local (or, in a variant for one tool, the literal) that says whether
        the event calls tool ``t``."""
        key = fields.tool_key(str(t))
        got = self._keys.get(key)
        if got is None:
            if self.calls is not None:
                got = self._keys[key] = str(key in self.calls)
            else:
                got = self._keys[key] = f"k{len(self._keys)}"
                self.c.lines.append(f"{got} = {'low' if key[0] else 'norm'} == {key[1]!r}")
        return got

    def _search(self, pattern: Any, subject: str) -> str:
        """Code testing whether RE2 ``pattern`` matches somewhere in ``subject``: a plain
        substring / prefix / suffix / equality test when the pattern is a literal."""
        rx = compile_regex(str(pattern))  # validates it
        body = str(pattern)
        start, end = body.startswith("^"), body.endswith("$") and not body.endswith("\\$")
        body = body[int(start) : len(body) - int(end)]
        if is_literal(body):
            if start and end:
                return f"{subject} == {body!r}"
            if start:
                return f"{subject}.startswith({body!r})"
            if end:
                return f"{subject}.endswith({body!r})"
            return f"{body!r} in {subject}"
        if is_backtracking(rx):  # None (unknown) when it runs out of time
            return f"{self.c.const(matches)}({self.c.const(rx)}, {subject})"
        return f"{self.c.const(rx)}.search({subject}) is not None"

    def _text_line(self, pad: str) -> str:
        self._text = True
        return f"{pad}if text is _U: text = _args_text(args)"

    def _emit(self, a: Atom, name: str) -> None:
        spec = spec_of(name, a.args)
        g = f"g{len(self.c.terms)}"
        self._bind(a, g, _kind(spec))
        if name in ("called_any", "called"):
            EMIT.of(name)(self, a, g, "", 0)
            return
        k = self._calls(a.args[0])
        init = None if spec.value == "any" else 0  # a value atom has no value before a call
        slot = self.c.slot(init, a) if spec.keeps_value else 0
        if k == "False" and name != "consecutive_count":
            # not a call of t here: bool atoms false, state atoms unchanged
            if spec.keeps_value:
                self.c.lines.append(f"{g} = s[{slot}]")
            else:
                self._bind(a, "False", "b")
            return
        EMIT.of(name)(self, a, g, k, slot)

    # ------------------------------------------------------------ one rule per tool atom
    # each: (grounding, atom, its local, the "calls t" test, its state slot)

    def _e_called_any(self, a: Atom, g: str, k: str, slot: int) -> None:
        self._bind(a, "True", "b")

    def _e_called(self, a: Atom, g: str, k: str, slot: int) -> None:
        self._bind(a, self._calls(a.args[0]), "b")

    def _e_count(self, a: Atom, g: str, k: str, slot: int) -> None:
        add = self.c.lines.append
        if k == "True":
            add(f"{g} = s[{slot}] = s[{slot}] + 1")
        else:
            add(f"{g} = s[{slot}] + 1 if {k} else s[{slot}]")
            add(f"if {k}: s[{slot}] = {g}")

    def _e_consecutive_count(self, a: Atom, g: str, k: str, slot: int) -> None:
        if k == "False":  # any other event ends the run
            self.c.lines.append(f"s[{slot}] = 0")
            self._bind(a, "0", "i")
        elif k == "True":
            self.c.lines.append(f"{g} = s[{slot}] = s[{slot}] + 1")
        else:
            self.c.lines.append(f"{g} = s[{slot}] = s[{slot}] + 1 if {k} else 0")

    def _e_count_with(self, a: Atom, g: str, k: str, slot: int) -> None:
        add = self.c.lines.append
        add(f"{g} = s[{slot}]")
        add(f"if {'' if k == 'True' else k + ' and '}{g} is not None:")
        add(f"    if args is None: {g} = s[{slot}] = None")
        add("    else:")
        add(self._text_line("        "))
        add(f"        hit{slot} = {self._search(a.args[1], 'text')}")
        add(f"        if {_HIDES}: hit{slot} = {self._hiding(a.args[1], 'args')}")
        add(f"        if hit{slot} is None: {g} = s[{slot}] = None")  # the regex ran out of time
        add(f"        elif hit{slot}: {g} = s[{slot}] = {g} + 1")

    def _field_state(self, a: Atom, g: str, k: str, slot: int, conv: str) -> None:
        pad = "" if k == "True" else "    "
        self.c.lines += [] if k == "True" else [f"if {k}:"]
        add = self.c.lines.append
        add(f"{pad}if args is None: s[{slot}] = None")
        add(f"{pad}else:")
        add(f"{pad}    fv = _field(args, {str(a.args[1])!r})")
        add(f"{pad}    s[{slot}] = None if fv is _MISSING or fv is _HIDDEN else {conv}")
        add(f"{g} = s[{slot}]")

    def _e_arg_length(self, a: Atom, g: str, k: str, slot: int) -> None:
        self._field_state(a, g, k, slot, f"{self.c.const(fields.arg_length)}(fv)")

    def _e_arg_numeric(self, a: Atom, g: str, k: str, slot: int) -> None:
        self._field_state(a, g, k, slot, "_numeric(fv)")

    def _e_arg_value(self, a: Atom, g: str, k: str, slot: int) -> None:
        conv = f"None if _opaque(fv) else {self.c.const(fields.term_value)}(fv)"
        self._field_state(a, g, k, slot, conv)

    def _e_output_has(self, a: Atom, g: str, k: str, slot: int) -> None:
        test = self._search(a.args[1], "content")
        tail = "" if k == "True" else f" if {k} else False"
        self.c.lines.append(f"{g} = (None if content is None else {test}){tail}")

    def _e_latency_exceeds(self, a: Atom, g: str, k: str, slot: int) -> None:
        test = f"float(dur) > {self.c.const(float(a.args[1]) * 1e6)}"
        tail = "" if k == "True" else f" if {k} else False"
        self.c.lines.append(f"{g} = (None if dur is None else {test}){tail}")

    def _on_args(self, g: str, k: str, test: list[str]) -> None:
        """A bool atom on the args of a call of t, unknown when they are missing."""
        add = self.c.lines.append
        add(f"if args is None: {g} = None" if k == "True" else f"if not {k}: {g} = False")
        if k != "True":
            add(f"elif args is None: {g} = None")
        add("else:")
        self.c.lines += test

    def _hiding(self, pattern: Any, over: str) -> str:
        """Code searching ``pattern`` where values are left out: in the args text
        (``over="args"``, ``fields.search_args``) or in a field's ``_text_form(fv)``
        (``fields.search_json``)."""
        rx = self.c.const(compile_regex(str(pattern)))
        if over == "args":
            return f"_search_args({rx}, args, text)"
        return f"_search_json({rx}, {over})"

    def _on_field(self, a: Atom, g: str, k: str, test: str, opaque: str) -> None:
        """``test`` on field f, and ``opaque`` (code) where the field is not wholly recorded
        (``fields.opaque``)."""
        f = str(a.args[1])
        last = f"    else: {g} = {opaque} if _opaque(fv) else {test}"
        lines = [f"    fv = _field(args, {f!r})", f"    if fv is _MISSING: {g} = False"]
        self._on_args(g, k, [*lines, f"    elif fv is _HIDDEN: {g} = None", last])

    def _e_arg_has(self, a: Atom, g: str, k: str, slot: int) -> None:
        line = self._text_line("    ")
        test = [line, f"    {g} = {self._search(a.args[1], 'text')}"]
        self._on_args(g, k, [*test, f"    if {_HIDES}: {g} = {self._hiding(a.args[1], 'args')}"])

    def _e_arg_paths_within(self, a: Atom, g: str, k: str, slot: int) -> None:
        norms = self.c.const([paths.normalise(str(p)) for p in a.args[1:]])
        within = f"_paths_within(args, {norms}, {self.c.const({})})"
        line = self._text_line("    ")  # a hidden value may be a path elsewhere
        self._on_args(g, k, [line, f"    {g} = {within} and (None if {_HIDES} else True)"])

    def _e_arg_field_has(self, a: Atom, g: str, k: str, slot: int) -> None:
        subject = "_text_form(fv)"
        hiding = self._hiding(a.args[2], subject)
        self._on_field(a, g, k, self._search(a.args[2], subject), hiding)

    def _e_arg_eq(self, a: Atom, g: str, k: str, slot: int) -> None:
        v = a.args[2]
        if not fields.is_number(v):
            test = f"_text_form(fv) == {self.c.const(fields.arg_text(v))}"
        else:  # a number: 5000.0 equals 5000 (fields.equal_to)
            test = f"{self.c.const(fields.equal_to(v))}(_text_form(fv))"
        self._on_field(a, g, k, test, "None")


def _kind(spec: AtomSpec) -> str:
    """The local's kind: ``b`` bool, ``k`` bool or unknown, ``i`` int, ``a`` any."""
    if spec.value == "bool":
        return "k" if spec.may_be_unknown else "b"
    return "a" if spec.may_be_unknown else "i"


EMIT: Rules[Callable[[Grounding, Atom, str, str, int], None]] = Rules("guard", prefix="e_")
"""One emitter per atom grounded from tool calls (the others are folded as constants)."""
for _name in dir(Grounding):
    if _name.startswith("_e_"):
        EMIT.rule(getattr(Grounding, _name))
EMIT.complete(s for s in ATOMS if TOOL in s.sources)


def paths_within(args: Any, prefixes: Sequence[paths.Norm], memo: dict[str, bool]) -> bool:
    """``paths.paths_within`` with each path's verdict memoised (bounded) in ``memo``."""
    for value in paths.path_values(args):
        ok = memo.get(value)
        if ok is None:
            p = paths.normalise(value)
            ok = any(paths.under(p, q) for q in prefixes)
            if len(memo) < 1024:
                memo[value] = ok
        if not ok:
            return False
    return True


class ToolGrounder:
    """The generated grounder on its own: ``values(tool, args, content, dur)`` in ``atoms`` order.

    ``state`` is its whole memory (copy it to roll back); ``ground(event)``
    answers like ``Grounder.ground`` for a ``tool_call`` event.
    """

    def __init__(
        self, atoms: Sequence[Atom], permissions: Permissions = None, agent: str | None = None
    ) -> None:
        c = Compiler()
        g = Grounding(c, atoms, permissions, agent)
        self.atoms = g.atoms
        c.lines.append(f"return ({''.join(n + ', ' for n in g.names)})")
        self._fn, init = c.build(PARAMS, f"grounder of {len(self.atoms)}")
        self.state: list[Any] = init

    def values(
        self, tool: str | None, args: Any, content: str | None = None, dur: int | None = None
    ) -> tuple[Any, ...]:
        """The atom values at a call of ``tool`` (the next position)."""
        return self._fn(tool, args, content, dur, self.state)

    def ground(self, event: Event) -> dict[Atom, Any]:
        """Every atom's value at ``event`` (a ``tool_call``), which becomes the next position."""
        vals = self.values(event.tool, event.args, event.content, event.duration_ns)
        return dict(zip(self.atoms, vals, strict=True))
