"""Span → facts: what one span says under the conventions of ``convention_table``.

``span_facts`` looks at one span's attributes only; everything that needs the
span tree (inherited agent, delegation, ordering, inferred tool calls, naming a
bare tool argument after the requesting call) is done per trace in
``trace_events``.

The table is compiled once, at import, into plain Python (``Reader``; its
``source`` shows the code): one function per row that reads the row's field
sources in order into local variables and returns the facts tuple, and one
dispatch that probes the few attributes selecting rows (operation name, span
kinds, the span name) and the presence conditions of each ``When``. So a span
costs the dictionary look-ups and parsing its rows name, as hand-written code
would, with the table the one place a convention is stated. Rows of the same
role as the first that applies fill its unrecorded fields (``_fill``).

Facts are a plain tuple in ``FACT_FIELDS`` order (cheap to build on the hot path).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sponsio_audit.ingest.convention_table import (
    AGENT,
    CONVENTIONS,
    CONVERSATION,
    Convention,
    Parse,
    Pick,
    Sum,
    When,
)
from sponsio_audit.ingest.values import as_text, to_count

FACT_FIELDS = (
    "role",  # tool | llm | agent | turn | check | enforce | violation | None
    "convention",  # gen_ai | gen_ai_deprecated | openllmetry | openinference | sponsio
    "agent",  # agent name recorded on the span itself
    "agent_scope",  # the span opens an agent scope (invoke_agent, agent kinds, agent_turn)
    "tool",
    "args",  # compact JSON text of the args object, None when not recorded
    "content",
    "prompt",
    "system_prompt",
    "tokens_in",
    "tokens_out",
    "tokens_total",
    "conversation",
    "requested",  # JSON [[name, args-object-or-null], …] of LLM-requested tool calls
    "contract_id",
    "result",
    "message",
    "event_type",
    "call_id",  # tool call id of a tool span (to match the requesting LLM call)
    "bare",  # JSON of a bare, unnamed tool argument value (args then None)
    "wants_tools",  # "1" the LLM response says it called tools, "0" it did not, None: unrecorded
    "results",  # JSON {call id: result text} of tool results in the LLM input
)

INT_FIELDS = frozenset({"tokens_in", "tokens_out", "tokens_total"})
"""Fields kept as integers; every other picked field is kept as text."""
SET_BY_ROW = frozenset({"role", "convention", "agent_scope", "conversation"})
"""Fields a row's name, role and scope give (and the span's conversation), never its sources."""

_AT = {f: i for i, f in enumerate(FACT_FIELDS)}
_NONE = (None,) * len(FACT_FIELDS)
_FILL_FROM, _ARGS, _BARE = _AT["agent"], _AT["args"], _AT["bare"]
_MISSING = object()


def groups(attrs: dict[str, Any], prefixes: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The attributes under each prefix, in one pass over the span's attributes."""
    out: dict[str, dict[str, Any]] = {p: {} for p in prefixes}
    for k, v in attrs.items():
        for p in prefixes:
            if k.startswith(p):
                out[p][k] = v
    return out


class _Code:
    """Python source being written, with the constants it refers to by name."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"as_text": as_text, "to_count": to_count, "groups": groups}
        self.names["MISSING"] = _MISSING

    def const(self, value: Any) -> str:
        """A name for ``value`` in the generated code's namespace."""
        name = f"K{len(self.names)}"
        self.names[name] = value
        return name

    def put(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)


def _cond(w: When, joined: str = "") -> str:
    """The presence conditions of one ``When`` as a Python expression over ``a`` (``joined``
    put before it; nothing when there is no condition, "True" if nothing is joined)."""
    terms = [" or ".join(f"{k!r} in a" for k in group) for group in w.has]
    out = " and ".join([f"({t})" for t in terms] + [f"{k!r} not in a" for k in w.lacks])
    return f"{joined}{out}" if out else "" if joined else "True"


def _convert(field: str, v: str) -> str:
    if field in INT_FIELDS:
        return f"({v} if {v}.__class__ is int and {v} >= 0 else to_count({v}))"
    return f"({v} if {v}.__class__ is str else as_text({v}))"


def _pick(code: _Code, d: int, p: Pick, maybe: set[str]) -> None:
    """Code for one ``Pick``: the value by its rule, then converted, if still unset."""
    f = p.field
    if f in maybe:
        code.put(d, f"if {f} is None:")
        d += 1
    ks = p.keys
    fallback = None
    if p.name == "*":
        fallback = "n"
    elif p.name is not None:
        fallback = f"(n[{len(p.name)}:].strip() or None if n.startswith({p.name!r}) else None)"
    if p.rule == "truthy":  # Python's `or` chain: the first non-empty, else the last operand
        operands = [f"a.get({k!r})" for k in ks] + ([fallback] if fallback else [])
        code.put(d, "v = " + " or ".join(operands))
    else:
        if p.rule == "present" and len(ks) > 1:
            code.put(d, "v = " + "".join(f"a[{k!r}] if {k!r} in a else " for k in ks) + "None")
        else:
            code.put(d, f"v = a.get({ks[0]!r})")
            for k in ks[1:]:
                code.put(d, f"if v is None: v = a.get({k!r})")
        if fallback:
            code.put(d, f"if v is None: v = {fallback}")
    code.put(d, "if v is not None:")
    code.put(d + 1, f"{f} = {_convert(f, 'v')}")
    maybe.add(f)


def _parse(code: _Code, d: int, p: Parse, maybe: set[str]) -> None:
    """Code for one ``Parse``: its reader called when its first key is present (or its
    prefix has attributes), each result kept where the field is still unset."""
    read = code.const(p.read)
    if all(x in maybe for x in p.into):  # skip the parse once every field it gives is set
        code.put(d, "if " + " or ".join(f"{x} is None" for x in p.into) + ":")
        d += 1
    if p.prefix:
        code.put(d, f"v = g[{p.prefix!r}]")
        code.put(d, "if v:")
        call = f"{read}(v)"
    else:
        if p.any_key:
            code.put(d, "if " + " or ".join(f"{k!r} in a" for k in p.keys) + ":")
            call = f"{read}({', '.join(f'a.get({k!r})' for k in p.keys)})"
        else:
            code.put(d, f"v = a.get({p.keys[0]!r}, MISSING)")
            code.put(d, "if v is not MISSING:")
            call = f"{read}({', '.join(['v', *(f'a.get({k!r})' for k in p.keys[1:])])})"
    d += 1
    if not any(x in maybe for x in p.into):
        code.put(d, f"{', '.join(p.into)}, = {call}")
    else:
        code.put(d, f"t = {call}")
        for j, x in enumerate(p.into):
            code.put(d, f"if {x} is None: {x} = t[{j}]" if x in maybe else f"{x} = t[{j}]")
    maybe.update(p.into)


def _row(code: _Code, i: int, row: Convention) -> None:
    """``def row<i>(a, n, c)``: the facts tuple of a span under ``row``."""
    code.put(0, f"def row{i}(a, n, c):")
    written = {x for src in row.fields for x in _into(src)}
    for f in FACT_FIELDS:
        if f in written:
            code.put(1, f"{f} = None")
    prefixes = tuple(s.prefix for s in row.fields if isinstance(s, Parse) and s.prefix)
    if prefixes:
        code.put(1, f"g = groups(a, {code.const(prefixes)})")
    maybe: set[str] = set()
    for src in row.fields:
        match src:
            case Pick():
                _pick(code, 1, src, maybe)
            case Parse():
                _parse(code, 1, src, maybe)
            case Sum():
                t, x, y = src.field, src.a, src.b
                code.put(1, f"if {t} is None and {x} is not None and {y} is not None:")
                code.put(2, f"{t} = {x} + {y}")
                maybe.add(t)
    given = {"role": repr(row.role), "convention": repr(row.name)}
    given |= {"agent_scope": repr(row.scope), "conversation": "c"}
    out = [given.get(f, f if f in written else "None") for f in FACT_FIELDS]
    code.put(1, f"return ({', '.join(out)})")


def _into(src: Pick | Parse | Sum) -> tuple[str, ...]:
    return src.into if isinstance(src, Parse) else (src.field,)


def _dispatch(code: _Code, table: Sequence[Convention]) -> None:
    """``def facts(a, n)``: the span's conversation, the table orders of the rows that
    apply (``hits``), and the facts of the one row that applies, else ``merge``'s."""
    code.put(0, "def facts(n, a):")
    code.put(1, "c = None")  # most spans record no conversation: one probe, not a look-up per key
    code.put(1, f"if not {code.const(frozenset(CONVERSATION))}.isdisjoint(a):")
    code.put(2, f"c = a.get({CONVERSATION[0]!r})")
    for k in CONVERSATION[1:]:
        code.put(2, f"if c is None: c = a.get({k!r})")
    code.put(2, "if c is not None and c.__class__ is not str: c = as_text(c)")
    keyed: dict[str, list[tuple[int, When]]] = {}
    rest: list[tuple[int, When]] = []
    for i, row in enumerate(table):
        for w in row.when:
            (keyed.setdefault(w.key, []) if w.key else rest).append((i, w))
    whens = [w for row in table for w in row.when]
    if all(w.names or _needs_key(w) for w in whens):
        # every row needs one of these keys (or a span name): most spans have none of them
        read = {k for w in whens for k in _keys(w)}
        names = frozenset(n for w in whens for n in w.names)
        code.put(
            1, f"if {code.const(frozenset(read))}.isdisjoint(a) and n not in {code.const(names)}:"
        )
        code.put(2, "return unmatched(a, c)")
    code.put(1, "hits = []")
    blocks = list(keyed.items())
    if blocks:
        _block(code, 1, *blocks[0])
    # the other selectors and the key-only rows: probed only when one of their keys is there
    later = [w for _, more in blocks[1:] for _, w in more] + [w for _, w in rest if not w.names]
    d = 1
    if later and all(_needs_key(w) for w in later):
        code.put(
            1, f"if not {code.const(frozenset(k for w in later for k in _keys(w)))}.isdisjoint(a):"
        )
        d = 2
    for key, alts in blocks[1:]:
        _block(code, d, key, alts)
    for i, w in rest:
        if not w.names:
            code.put(d, f"if {_cond(w)}: hits.append({i})")
    names = frozenset(n for _, w in rest for n in w.names)
    if names:
        code.put(1, f"if n in {code.const(names)}:")
        for i, w in rest:
            if w.names:
                code.put(
                    2, f"if {_member('n', w.names, code)}{_cond(w, ' and ')}: hits.append({i})"
                )
    code.put(1, "if not hits:")
    code.put(2, "return unmatched(a, c)")
    code.put(1, "return ROWS[hits[0]](a, n, c) if len(hits) == 1 else merge(hits, a, n, c)")


def _block(code: _Code, d: int, key: str, alts: list[tuple[int, When]]) -> None:
    """The rows selected by one attribute's value ``v``: a branch for null, one per group of
    values the table names that select the same alternatives, and one for any other value;
    in each, a row is tested once (its alternatives' presence conditions, or-ed)."""
    code.put(d, f"v = a.get({key!r})")
    named = sorted({v for _, w in alts if w.values for v in w.values if v is not None})
    groups: dict[tuple[int, ...], list[str]] = {}
    for value in named:
        sel = tuple(j for j, (_, w) in enumerate(alts) if w.values is None or value in w.values)
        groups.setdefault(sel, []).append(value)
    branches = [
        ("v is None", [j for j, (_, w) in enumerate(alts) if w.values and None in w.values])
    ]
    for picked, values in groups.items():
        branches.append((_member("v", frozenset(values), code), list(picked)))
    branches.append(("", [j for j, (_, w) in enumerate(alts) if w.values is None]))
    for b, (test, chosen) in enumerate(branches):
        code.put(d, "else:" if not test else f"{'elif' if b else 'if'} {test}:")
        code.put(d + 1, "pass")
        for i in sorted({alts[j][0] for j in chosen}):
            conds = [_cond(alts[j][1]) for j in chosen if alts[j][0] == i]
            if "True" in conds:
                code.put(d + 1, f"hits.append({i})")
            else:
                code.put(d + 1, f"if {' or '.join(f'({c})' for c in conds)}: hits.append({i})")


def _needs_key(w: When) -> bool:
    """``w`` holds only when one of its keys (``_keys``) is present."""
    return bool(w.has) or bool(w.key and (w.values is None or None not in w.values))


def _keys(w: When) -> set[str]:
    return {k for k in (w.key, *(k for g in w.has for k in g)) if k}


def _member(v: str, values: frozenset[str], code: _Code) -> str:
    """``v`` is one of ``values``, as a Python expression."""
    if len(values) == 1:  # == is False for any other value
        return f"{v} == {next(iter(values))!r}"
    return f"{v}.__class__ is str and {v} in {code.const(values)}"  # never hash a list


class Reader:
    """The table compiled for reading spans (module doc); ``source`` is its code."""

    def __init__(self, table: Sequence[Convention]) -> None:
        for row in table:
            _check(row)
        code = _Code()
        for i, row in enumerate(table):
            _row(code, i, row)
        _dispatch(code, table)
        self.source = "\n".join(code.lines) + "\n"
        self.rows: tuple[Callable[[dict[str, Any], str, str | None], tuple[Any, ...]], ...] = ()
        self.roles = tuple(row.role for row in table)
        self._twins = tuple(
            next(j for j in range(i + 1) if table[j].fields == row.fields)
            for i, row in enumerate(table)
        )
        """Per row, the first row with the same sources (itself if none): a later twin
        that applies too adds nothing, so ``_merge`` does not read the span twice."""
        ns = dict(code.names, unmatched=_unmatched, merge=self._merge)
        # the code is made from the table only (our own rows), never from trace content
        exec(compile(self.source, "<convention_table>", "exec"), ns)
        self.rows = tuple(ns[f"row{i}"] for i in range(len(table)))
        ns["ROWS"] = self.rows
        self.facts: Callable[[str, dict[str, Any]], tuple[Any, ...]] = ns["facts"]
        """The facts tuple (``FACT_FIELDS``) of one span from its name and attributes."""

    def _merge(self, hits: list[int], a: dict[str, Any], n: str, c: str | None) -> tuple[Any, ...]:
        """The facts of the first row that applies, filled from later rows of its role."""
        hits = sorted(set(hits))
        role = self.roles[hits[0]]
        f = self.rows[hits[0]](a, n, c)
        read = {self._twins[hits[0]]}
        for i in hits[1:]:
            if self.roles[i] == role and None in f and self._twins[i] not in read:
                read.add(self._twins[i])
                f = _fill(f, self.rows[i](a, n, c))
        return f


def _check(row: Convention) -> None:
    """Raise ``ValueError`` naming the row when it cannot be compiled as written."""
    where = f"convention row {row.name}/{row.role}"
    if not row.when or not all(w.key or w.names or w.has for w in row.when):
        raise ValueError(f"{where}: every When needs a selector, span names or keys present")
    for src in row.fields:
        for field in _into(src) + ((src.a, src.b) if isinstance(src, Sum) else ()):
            if field not in FACT_FIELDS or field in SET_BY_ROW:
                raise ValueError(f"{where}: {field!r} is not a fact field a source may give")
        if isinstance(src, Pick) and not src.keys:
            raise ValueError(f"{where}: Pick({src.field!r}) has no keys")
        if isinstance(src, Parse) and bool(src.keys) == bool(src.prefix):
            raise ValueError(f"{where}: Parse({src.read.__name__}) needs keys or a prefix")


def _unmatched(a: dict[str, Any], c: str | None) -> tuple[Any, ...]:
    """Facts of a span no row applies to: only its agent and conversation, if recorded."""
    agent = a.get(AGENT)
    if agent is None and c is None:
        return _NONE
    return (None, None, as_text(agent), False) + (None,) * 8 + (c,) + (None,) * 9


def _fill(first: tuple[Any, ...], other: tuple[Any, ...]) -> tuple[Any, ...]:
    """``first``'s unrecorded (None) fields from ``other`` (a later row of the same role);
    a bare argument value is dropped once args are known."""
    out = list(first)
    for i in range(_FILL_FROM, len(out)):
        if out[i] is None:
            out[i] = other[i]
    if out[_ARGS] is not None:
        out[_BARE] = None
    return tuple(out)


READER = Reader(CONVENTIONS)
"""The registry's table, compiled once at import."""

span_facts = READER.facts
