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

The emitted lines read the locals ``tool``, ``args``, ``content``, ``dur``
and the state list ``s`` and bind each atom to a local (``Compiler.terms``)
with its kind (``b`` bool, ``k`` bool or unknown, ``i`` int, ``a`` any).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sponsio_audit.atoms import fields, paths
from sponsio_audit.atoms.online import Grounder, Permissions
from sponsio_audit.atoms.registry import TOOL, canonical_name, lookup
from sponsio_audit.event import Event, args_text
from sponsio_audit.guard.past import Compiler
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.regexes import compile_regex, is_literal

_U: Any = object()  # the args text is not built yet
Key = tuple[bool, str]  # fields.tool_key
_STATE = frozenset({"count", "consecutive_count", "count_with", "arg_length", "arg_numeric"})
_KINDS = {
    "called": "b",
    "called_any": "b",
    "count": "i",
    "consecutive_count": "i",
    "count_with": "a",
    "arg_length": "a",
    "arg_numeric": "a",
}  # every other tool atom: bool or unknown ("k")

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
        constant = [a for a in self.atoms if TOOL not in _spec(a).sources]
        probe = Grounder(constant, permissions).ground(Event("tool_call", agent=agent))
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
        return f"{self.c.const(rx)}.search({subject}) is not None"

    def _text_line(self, pad: str) -> str:
        self._text = True
        return f"{pad}if text is _U: text = _args_text(args)"

    def _emit(self, a: Atom, name: str) -> None:
        c, args = self.c, a.args
        g = f"g{len(c.terms)}"
        self._bind(a, g, _KINDS.get(name, "k"))
        if name == "called_any":
            self._bind(a, "True", "b")
            return
        k = self._calls(args[0])
        add = c.lines.append
        if name == "called":
            self._bind(a, k, "b")
            return
        slot = c.slot(0, a) if name in _STATE else 0
        if k == "False":  # not a call of t here: bool atoms false, state atoms unchanged
            if name == "consecutive_count":
                add(f"s[{slot}] = 0")
                self._bind(a, "0", "i")
            elif name in _STATE:
                add(f"{g} = s[{slot}]")
            else:
                self._bind(a, "False", "b")
            return
        pad = "" if k == "True" else "    "
        head = [] if k == "True" else [f"if {k}:"]
        if name in ("count", "consecutive_count"):
            if k == "True":
                add(f"{g} = s[{slot}] = s[{slot}] + 1")
            elif name == "count":
                add(f"{g} = s[{slot}] + 1 if {k} else s[{slot}]")
                add(f"if {k}: s[{slot}] = {g}")
            else:
                add(f"{g} = s[{slot}] = s[{slot}] + 1 if {k} else 0")
        elif name == "count_with":
            add(f"{g} = s[{slot}]")
            add(f"if {'' if k == 'True' else k + ' and '}{g} is not None:")
            add(f"    if args is None: {g} = s[{slot}] = None")
            add("    else:")
            add(self._text_line("        "))
            add(f"        if {self._search(args[1], 'text')}: {g} = s[{slot}] = {g} + 1")
        elif name in ("arg_length", "arg_numeric"):
            f = str(args[1])
            conv = "len(_text_form(fv))" if name == "arg_length" else "_numeric(fv)"
            c.lines += head
            add(f"{pad}if args is None: s[{slot}] = None")
            add(f"{pad}else:")
            add(f"{pad}    fv = _field(args, {f!r})")
            add(f"{pad}    s[{slot}] = None if fv is _MISSING else {conv}")
            add(f"{g} = s[{slot}]")
        elif name in ("output_has", "latency_exceeds"):
            src = "content" if name == "output_has" else "dur"
            if name == "output_has":
                test = self._search(args[1], "content")
            else:
                test = f"float(dur) > {c.const(float(args[1]) * 1e6)}"
            tail = "" if k == "True" else f" if {k} else False"
            add(f"{g} = (None if {src} is None else {test}){tail}")
        else:  # a bool atom on the args, unknown when they are missing
            add(f"if args is None: {g} = None" if k == "True" else f"if not {k}: {g} = False")
            if k != "True":
                add(f"elif args is None: {g} = None")
            add("else:")
            c.lines += self._args_test(a, name, g)

    def _args_test(self, a: Atom, name: str, g: str) -> list[str]:
        c, args = self.c, a.args
        if name in ("arg_has", "called_with"):
            return [self._text_line("    "), f"    {g} = {self._search(args[1], 'text')}"]
        if name == "arg_paths_within":
            norms = c.const([paths.normalise(str(p)) for p in args[1:]])
            return [f"    {g} = _paths_within(args, {norms}, {c.const({})})"]
        f = str(args[1])
        if name == "arg_field_has":
            test = self._search(args[2], "_text_form(fv)")
        elif name == "arg_eq":
            test = f"_text_form(fv) == {c.const(fields.arg_text(args[2]))}"
        else:
            raise ValueError(f"the guard cannot ground {a.name}{a.args}")
        return [f"    fv = _field(args, {f!r})", f"    {g} = fv is not _MISSING and {test}"]


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


def _spec(a: Atom) -> Any:
    spec = lookup(canonical_name(a.name))
    if spec is None or not spec.accepts(len(a.args)):
        raise ValueError(f"unknown atom or wrong arguments: {a.name}{a.args}")
    return spec


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
