"""Grounding the whole events table at once (the batch audit).

``ground_columns(table, atoms)`` gives, per atom, a ``Column``: a value array
(bool, or float64 for int/number atoms) and an unknown bit-array. Rows are
events sorted by (trace_id, seq), already restricted to a contract's view by
the caller; state and keep-last values restart at every trace. The values
are those of ``online.Grounder`` run trace by trace (property-tested).

How it stays fast: tool names, event types and agents are dictionary-encoded
once (int32 codes) and compared through lookup tables over their few
distinct values (``called`` columns keep their codes, so a view samples the
codes once for all of them); text at the rows of interest (one tool's
calls, one event type) is dictionary-encoded once per column and rows, and
regexes (Arrow's RE2), DuckDB's JSON field reads (``arg_fields``) and Python
parsing run on its distinct values only, spread back to rows by code;
running values are segmented NumPy scans (``scans``). The rare state
atoms (``flow``, ``ctx``, ``ctx_matches``, ``delegation_depth``) are in
``state_columns``; flow and delegation depth replay the online grounder
on only the rows that can change them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms import arg_fields, deferred, fields, paths, prompts, scans
from sponsio_audit.atoms.columns import (
    CodedColumn,
    Column,
    Columns,
    bool_column,
    num_column,
    regex_hits,
    to_numpy,
)
from sponsio_audit.atoms.deferred import Deferred
from sponsio_audit.atoms.fields import normalise_tool
from sponsio_audit.atoms.online import Permissions, perm_set
from sponsio_audit.atoms.registry import EVIDENCE, TOOL, Rules, spec_of
from sponsio_audit.atoms.scans import trace_starts
from sponsio_audit.atoms.state_columns import STATE_ATOMS
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.regexes import compile_regex

__all__ = [
    "Column",
    "Deferred",
    "Grounded",
    "Grounding",
    "ground_columns",
    "normalise_tool",
    "trace_starts",
]


class Grounding(Columns):
    """The shared columns of one events table; ``column(atom)`` grounds one atom (cached)."""

    def column(self, atom: Atom, view: frozenset[str] | None = None) -> Grounded:
        """The grounded column of ``atom`` (cached). ``view``: the event types of the
        contract's view, over whose positions a run atom counts (None: every row)."""
        spec = spec_of(atom.name, atom.args)
        key, rule = Atom(spec.name, atom.args), RULES.of(atom.name)
        if spec.run and view is not None:
            return self.cached(("atom", key, view), lambda: rule(self, *atom.args, view=view))
        return self.cached(("atom", key), lambda: rule(self, *atom.args))


Grounded = Column | CodedColumn | Deferred
"""An atom's column: computed whole, or grounded at the rows read (``deferred``)."""
Builder = Callable[..., Grounded]
RULES: Rules[Builder] = Rules("columnar")
"""One function per atom: ``fn(columns, *args)`` → the atom's column."""
_atom = RULES.rule


@_atom
def _called(g: Columns, t: Any) -> CodedColumn:
    return g.calls_coded(t)


@_atom
def _called_any(g: Columns) -> Column:
    return bool_column(g.is_type(TOOL))


@_atom
def _count(g: Columns, t: Any) -> Deferred:
    return Deferred(g.n, deferred.running(g.calls(t), g.nameless(), g.start))


@_atom
def _consecutive_count(g: Columns, t: Any, view: frozenset[str] | None = None) -> Column | Deferred:
    calls, nameless = g.calls(t), g.nameless()
    inside = np.zeros(g.n, dtype=bool)
    for k in view or ():
        inside |= g.is_type(k)
    if view is None or inside.all():
        return num_column(*_run(calls, nameless, g.start))
    if not nameless.any():  # the run at i: calls of t since the last view row that is not one
        return Deferred(g.n, deferred.run_in_view(calls, inside & ~calls, g.start))
    # over the view's rows only (an event outside the view neither ends nor extends a
    # run), then kept at the other rows, as online.Grounder does
    at = np.flatnonzero(inside)
    st = g.start[at]
    first = np.ones(len(at), dtype=bool)
    first[1:] = st[1:] != st[:-1]
    run, unknown = _run(calls[at], nameless[at], scans.starts_from_flags(first))
    value, unk = np.zeros(g.n), np.zeros(g.n, dtype=bool)
    value[at], unk[at] = run, unknown
    return num_column(*scans.keep_last(inside, value, unk, g.start))


def _run(calls: np.ndarray, nameless: np.ndarray, start: np.ndarray) -> tuple[Any, Any]:
    """(run of calls ending at each row, where it is unknown: it reaches a nameless call)."""
    if not nameless.any():
        return scans.run_length(calls, start), np.zeros(len(calls), dtype=bool)
    maybe = calls | nameless  # a call with no recorded tool may have been one of t
    run = scans.run_length(maybe, start)
    last = scans.last_index(nameless, start)
    idx = np.arange(len(calls), dtype=np.int64)
    return run, maybe & (last >= 0) & (idx - last < run)


def _unknown_call(g: Columns, t: Any, missing: np.ndarray) -> np.ndarray:
    """Where an atom of calls of t is unknown: ``missing`` at its calls, and every call
    with no recorded tool."""
    return (g.calls(t) & missing) | g.nameless()


def _hidden(g: Columns, t: Any) -> np.ndarray:
    """Calls of t whose args leave values out (``fields.hides_args``): a ``<redacted>``
    value, or text that is not JSON (``fields.unparsed``, parsed only where the RE2
    prefilter says it may be)."""
    calls, key = g.calls(t), fields.tool_key(str(t))

    def make() -> np.ndarray:
        out = g.search("args", fields.HIDDEN_TEXT, calls, key).copy()
        maybe = g.search("args", fields.UNPARSED_PREFIX, calls, key)
        if maybe.any():
            d = g.distinct("args", maybe, ("unparsed", key))
            got = [fields.unparsed(json.loads(s)) for s in d.values.to_pylist()]
            out[d.at] |= np.array(got, dtype=bool)[d.ids]
        return out

    return cast(np.ndarray, g.cached(("hidden", key), make))


def _args_search(g: Columns, t: Any, regex: Any) -> tuple[np.ndarray, np.ndarray]:
    """(calls of t whose args match, calls of t with args missing or no recorded tool,
    or whose match is not decided by args that leave values out: ``fields.search_args``)."""
    calls = g.calls(t)
    key = fields.tool_key(str(t))
    hit, late = g.search3("args", str(regex), calls, key)
    unknown = _unknown_call(g, t, g.isnull("args")) | late
    hidden = _hidden(g, t)
    if hidden.any():  # again over the hiding args, once per distinct string
        d = g.distinct("args", hidden, ("hidden", key))
        rx = compile_regex(str(regex))
        got = [fields.search_args(rx, json.loads(s), s) for s in d.values.to_pylist()]
        hit, unknown = hit & ~hidden, unknown & ~hidden
        hit[d.at] = np.array([x is True for x in got], dtype=bool)[d.ids]
        unknown[d.at] = np.array([x is None for x in got], dtype=bool)[d.ids]
    return hit, unknown


@_atom
def _arg_has(g: Columns, t: Any, regex: Any) -> Column:
    return bool_column(*_args_search(g, t, regex))


def _on_field(g: Columns, t: Any, f: Any, test: Callable[[pa.Array], pa.Array]) -> Column:
    """A bool atom testing field f's text (Arrow kernel ``test``) at calls of t; unknown
    where the field is not wholly recorded (``fields.opaque``)."""
    calls = g.calls(t)
    fc = arg_fields.field_column(g, calls, fields.tool_key(str(t)), str(f))
    hit = fc.spread(to_numpy(test(fc.text), False).astype(bool), g.n, False)
    opaque = fc.spread(fc.opaque(), g.n, False)
    return bool_column(hit & ~opaque, _unknown_call(g, t, g.isnull("args")) | opaque)


@_atom
def _arg_field_has(g: Columns, t: Any, f: Any, regex: Any) -> Column:
    calls = g.calls(t)
    fc = arg_fields.field_column(g, calls, fields.tool_key(str(t)), str(f))
    hit, late = regex_hits(fc.text, str(regex))
    opaque = fc.opaque()
    if opaque.any():  # an object or list that hides a value (``fields.search_json``)
        rx = compile_regex(str(regex))
        texts = fc.text.to_pylist()
        for i in np.flatnonzero(opaque):
            got = fields.search_json(rx, texts[i]) if texts[i] is not None else None
            hit[i], late[i] = got is True, got is None
    return bool_column(
        fc.spread(hit, g.n, False),
        _unknown_call(g, t, g.isnull("args")) | fc.spread(late, g.n, False),
    )


@_atom
def _arg_eq(g: Columns, t: Any, f: Any, value: Any) -> Column:
    if not fields.is_number(value):
        want = fields.arg_text(value)
        return _on_field(g, t, f, lambda text: pc.equal(text, want))
    equal = fields.equal_to(value)  # a number: once per distinct field text, in Python
    return _on_field(
        g, t, f, lambda text: pa.array([equal(x) for x in text.to_pylist()], pa.bool_())
    )


@_atom
def _arg_paths_within(g: Columns, t: Any, *prefixes: Any) -> Column:
    norms = [paths.normalise(str(p)) for p in prefixes]
    calls = g.calls(t)
    within = g.per_args(
        calls, fields.tool_key(str(t)), lambda a: paths.paths_within(a, norms), bool
    )
    hidden = within & _hidden(g, t)  # a hidden value may be a path elsewhere
    return bool_column(within & ~hidden, _unknown_call(g, t, g.isnull("args")) | hidden)


@_atom
def _output_has(g: Columns, t: Any, regex: Any) -> Column:
    calls = g.calls(t)
    hit, late = g.search3("content", str(regex), calls, fields.tool_key(str(t)))
    return bool_column(hit, _unknown_call(g, t, g.isnull("content")) | late)


@_atom
def _perm(g: Columns, p: Any) -> Column:
    return bool_column(g.where_value("agent", lambda a: str(p) in perm_set(g.permissions, a)))


@_atom
def _contains(g: Columns, f: Any) -> Column:
    writes = g.is_type("data_write")
    has = g.per_args(
        writes, "data_write", lambda a: fields.field_value(a, str(f)) is not fields.MISSING, bool
    )
    return bool_column(scans.running_any(has, g.segments))


def _text_atom(g: Columns, kind: str, name: str, regex: Any) -> Column:
    rows = g.is_type(kind)
    hit, late = g.search3(name, str(regex), rows, kind)
    return bool_column(hit, (rows & g.isnull(name)) | late)


@_atom
def _llm_output_contains(g: Columns, regex: Any) -> Column:
    return _text_atom(g, "llm_response", "content", regex)


@_atom
def _llm_input_contains(g: Columns, regex: Any) -> Column:
    rows = g.is_type("llm_request")
    hit, late = g.search3("prompt", str(regex), rows, "llm_request")
    s_hit, s_late = prompts.shared_hits(g, str(regex), rows)
    return bool_column(hit | s_hit, (rows & prompts.inputs(g).missing) | late | s_late)


@_atom
def _system_prompt_present(g: Columns) -> Column:
    req = g.is_type("llm_request")
    sp = g.table.column("system_prompt")
    nonempty = to_numpy(pc.greater(pc.utf8_length(sp), 0), False)
    return bool_column(req & nonempty, req & prompts.inputs(g).missing)


@_atom
def _context_length(g: Columns) -> Column:
    req = g.is_type("llm_request")
    ins = prompts.inputs(g)
    length = prompts.lengths(g).astype(np.float64)
    return num_column(*scans.keep_last(req, length, ins.missing, g.start))


@_atom
def _token_count(g: Columns, kind: Any) -> Deferred:
    k = fields.check_token_kind(kind)
    at = np.flatnonzero(g.is_type("llm_response"))
    names = {"input": "tokens_in", "output": "tokens_out"}
    if k in names:
        value, missing = g.numbers_at(names[k], at)
    else:
        value, missing = g.numbers_at("tokens_total", at)
        if missing.any():
            (t_in, n_in), (t_out, n_out) = (g.numbers_at(c, at) for c in names.values())
            value = np.where(missing, t_in + t_out, value)
            missing &= n_in | n_out
    known = np.where(missing, 0.0, value)  # sums over the responses only
    return Deferred(g.n, deferred.running_over(g.is_type("llm_response"), known, missing, g.start))


@_atom
def _latency_exceeds(g: Columns, t: Any, ms: Any) -> Column:
    at = np.flatnonzero(g.calls(t))
    duration, missing = g.numbers_at("duration_ns", at)
    value, unknown = np.zeros(g.n, dtype=bool), np.zeros(g.n, dtype=bool)
    value[at] = duration > float(ms) * 1e6
    unknown[at] = missing
    return bool_column(value, unknown | g.nameless())


@_atom
def _count_with(g: Columns, t: Any, regex: Any) -> Deferred:
    return Deferred(g.n, deferred.running(*_args_search(g, t, regex), g.start))


def _keep_field(g: Columns, t: Any, value: np.ndarray) -> Column:
    """Keep-last of a field value at calls of t (NaN = unknown, like missing args); a call
    with no recorded tool may have been one of t: unknown from there."""
    calls = g.calls(t)
    nameless = g.nameless()
    unknown = (calls & (g.isnull("args") | np.isnan(value))) | nameless
    src = calls | nameless
    return num_column(*scans.keep_last(src, np.where(unknown, 0.0, value), unknown, g.start))


@_atom
def _arg_length(g: Columns, t: Any, f: Any) -> Column:
    calls = g.calls(t)
    fc = arg_fields.field_column(g, calls, fields.tool_key(str(t)), str(f))
    chars = to_numpy(pc.utf8_length(fc.text), -1).astype(np.float64)
    other = fc.kind == arg_fields.OTHER  # a list or an object counts its items (ArgLength)
    if other.any():
        texts = fc.text.filter(pa.array(other)).to_pylist()
        chars[other] = [
            fields.arg_length(json.loads(x)) if x and x[0] in "[{" else len(x) for x in texts
        ]
    return _keep_field(g, t, fc.spread(np.where(chars < 0, np.nan, chars), g.n, np.nan))


@_atom
def _arg_numeric(g: Columns, t: Any, f: Any) -> Column:
    calls = g.calls(t)
    return _keep_field(g, t, arg_fields.numbers(g, calls, fields.tool_key(str(t)), str(f)))


# ---------------------------------------------------- value and evidence atoms (online_terms)


def _values(
    g: Columns, src: np.ndarray, key: Hashable, read: Callable[[Any], Any], unknown: np.ndarray
) -> Column:
    """Keep-last of ``read(args)`` (a value term's value; MISSING or args missing: unknown)
    at rows ``src``, unknown before the first one; values are Python objects (dtype object)."""
    got = g.per_args(src, key, read, object)
    has = g.per_args(src, key, lambda a: read(a) is not fields.MISSING, bool)
    unknown = src & (~has | unknown)
    value = np.where(unknown, _NONE, got)
    return Column(*scans.keep_last(src, value, unknown, g.start, cast(Any, None), True))


_NONE = np.full(1, None, dtype=object)


@_atom
def _arg_value(g: Columns, t: Any, f: Any) -> Column:
    nameless = g.nameless()  # a call with no recorded tool may have been one of t

    def read(a: Any) -> Any:
        v = fields.field_value(a, str(f))
        return fields.MISSING if v is fields.MISSING or fields.opaque(v) else fields.term_value(v)

    key = ("value", fields.tool_key(str(t)))
    return _values(g, g.calls(t) | nameless, key, read, nameless)


@_atom
def _ctx_value(g: Columns, k: Any) -> Column:
    key = str(k)
    updates = g.is_type("context_update")
    sets = g.per_args(updates, "context_update", lambda a: isinstance(a, dict) and key in a, bool)
    unknown = np.zeros(g.n, dtype=bool)

    def read(a: Any) -> Any:  # a value the exporter hid (``<redacted>``): unknown
        return fields.MISSING if fields.hidden(a[key]) else fields.term_value(a[key])

    return _values(g, sets, ("ctx_value", key), read, unknown)


def _evidence(g: Columns, p: Any, entry: str | None, want: Any = None) -> Column:
    """A bool atom at evidence events of predicate p (``entry`` None: ``claim_emitted``)."""
    ev = g.is_type(EVIDENCE)
    nameless = ev & g.isnull("tool")
    at = ev & g.where_value("tool", lambda x: x == str(p))
    if entry is None:
        return bool_column(at, nameless)
    codes = g.per_args(at, ("evidence", str(p)), lambda a: _code(a, entry, want), np.int8)
    unknown = nameless | (at & (g.isnull("args") | (codes == 2)))
    return bool_column(at & (codes == 1) & ~unknown, unknown)


def _code(args: Any, entry: str, want: Any) -> int:
    got = fields.evidence_is(args, entry, want)
    return 2 if got is None else int(got)


@_atom
def _claim_emitted(g: Columns, p: Any) -> Column:
    return _evidence(g, p, None)


@_atom
def _evidence_verdict(g: Columns, p: Any, v: Any) -> Column:
    return _evidence(g, p, "verdict", v)


@_atom
def _evidence_action(g: Columns, p: Any, a: Any) -> Column:
    return _evidence(g, p, "action", a)


for _fn in STATE_ATOMS.values():
    RULES.rule(_fn)
RULES.complete()


def ground_columns(
    table: pa.Table,
    atoms: Sequence[Atom],
    permissions: Permissions = None,
    view: frozenset[str] | None = None,
) -> dict[Atom, Grounded]:
    """Ground every atom over the events table (rows sorted by (trace_id, seq));
    ``view``: as in ``Grounding.column``."""
    g = Grounding(table, permissions)
    return {a: g.column(a, view) for a in atoms}
