"""Value rules shared by both groundings: tool names, regexes, argument fields.

Both the online grounder (one event at a time) and the columnar grounding
(the whole events table) call these functions, so the two cannot disagree
on what a tool name, a field or a number is (SEMANTICS.md §5).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from sponsio_audit.ltl.reference import Composite, Value
from sponsio_audit.redact import REDACTED
from sponsio_audit.regexes import compile_regex, matches
from sponsio_audit.vocab import TOKEN_KINDS

MISSING: Any = object()
"""Sentinel: the field is absent from the arguments object."""

HIDDEN: Any = object()
"""Sentinel: the field was recorded as ``<redacted>`` (or lies under one): its value is not
recorded, so an atom that reads it is unknown (SEMANTICS.md §2)."""

HIDDEN_TEXT = f'"{REDACTED}"'
"""A ``<redacted>`` value as compact JSON writes it: in args text, or in a field's
``text_form``, it marks a hidden value (no RE2 metacharacters: a literal pattern too)."""

_NUMERIC = compile_regex(r"^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$")


def normalise_tool(name: str | None) -> str | None:
    """Lower-case ``name`` and drop an MCP prefix ``mcp__<server>__`` (``mcp__fin__X`` → ``x``).

    A name is MCP-prefixed when it starts with ``mcp__`` (any case) and has a
    second ``__`` after a non-empty server name; the tool is what follows it.
    """
    if name is None:
        return None
    low = name.lower()
    if low.startswith("mcp__"):
        cut = low.find("__", 6)  # server name is at least one character
        if cut != -1 and cut + 2 < len(low):
            return low[cut + 2 :]
    return low


def is_mcp_name(name: str) -> bool:
    """True when ``name`` names a tool of one MCP server (``mcp__<server>__<tool>``)."""
    return normalise_tool(name) != name.lower()


def tool_key(contract_tool: str) -> tuple[bool, str]:
    """How a contract's tool name is compared: ``(full, name)``.

    ``full`` is True for a prefixed MCP name, which matches that server only by
    comparing the whole recorded name case-insensitively; otherwise ``name`` is
    compared with the recorded name lower-cased and stripped of its MCP prefix.
    """
    if is_mcp_name(contract_tool):
        return True, contract_tool.lower()
    return False, contract_tool.lower()


def tool_matches(key: tuple[bool, str], recorded: str | None) -> bool:
    """Whether a recorded tool name is the contract tool ``key`` (see ``tool_key``)."""
    if recorded is None:
        return False
    full, name = key
    return (recorded.lower() if full else normalise_tool(recorded)) == name


def text_form(value: Any) -> str:
    """A field as it is matched: a string as is, anything else as compact JSON (non-ASCII kept)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def arg_length(value: Any) -> int:
    """``arg_length`` as Sponsio's ``ArgLength``: characters of a string, items of a list,
    keys of an object, characters of the JSON text of any other value (SEMANTICS.md §5)."""
    if isinstance(value, (str, list, dict)):
        return len(value)
    return len(text_form(value))


def arg_text(value: Any) -> str:
    """A contract argument (``v`` of ``arg_eq``/``ctx``) in the same string form as a field."""
    if isinstance(value, str):
        return value
    return text_form(value)


_JSON_NUMBER = compile_regex(r"^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_JSON_INT = compile_regex(r"^-?(?:0|[1-9]\d*)$")


def is_number(value: Any) -> bool:
    """Whether a contract value is a number (an int or a float, not a bool): ``arg_eq``
    then compares numbers (``equal_to``), else text."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def equal_to(want: Any) -> Callable[[str | None], bool]:
    """``arg_eq``'s test of a field's text form (``text_form``) against the contract's ``v``.

    Texts are equal, or, when ``v`` is a number, the text is a JSON number of the same
    value (``5000.0`` and ``5e3`` equal ``5000``; whole numbers compare exactly).
    """
    text = arg_text(want)
    if not is_number(want):
        return lambda got: got == text

    def test(got: str | None) -> bool:
        if got is None:
            return False
        if got == text:
            return True
        if not _JSON_NUMBER.search(got):
            return False
        if isinstance(want, int) and _JSON_INT.search(got):
            return int(got) == want
        try:
            return float(got) == want
        except OverflowError:
            return False

    return test


def field_value(args: Any, name: str) -> Any:
    """Field ``name`` of an arguments object, MISSING, or HIDDEN (``<redacted>``).

    The top-level key ``name`` wins; when it is absent and ``name`` contains
    dots, it is read as a path through nested objects (``a.b.c``; lists are
    not indexed). A path through a ``<redacted>`` value is HIDDEN, not MISSING:
    the exporter replaced the object that may hold it. Any field but ``input`` of
    args recorded as text that is not JSON (``unparsed``) is HIDDEN too.
    """
    if not isinstance(args, dict):
        return MISSING
    if name in args:
        v = args[name]
        return HIDDEN if v == REDACTED else v
    if len(args) == 1 and unparsed(args):  # len first: field_value is on the hot path
        return HIDDEN
    if "." not in name:
        return MISSING
    node: Any = args
    for part in name.split("."):
        if node == REDACTED:
            return HIDDEN
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return HIDDEN if node == REDACTED else node


UNPARSED_PREFIX = r'^\{"input":"(?: |\\[tnr])*[\[{]'
"""RE2 prefilter of ``unparsed`` over compact args JSON, JSON white space escaped as JSON
writes it (a superset: the text may be JSON)."""


def unparsed(args: Any) -> bool:
    """Whether args are ingest's wrapper ``{"input": text}`` of text that looks like an
    object or a list but is not JSON (a Python repr, JSON cut short by an exporter):
    the object's fields and JSON text are not recorded, only this text."""
    if args.__class__ is not dict or len(args) != 1:
        return False
    v = args.get("input")
    if v.__class__ is not str or v.lstrip(" \t\n\r")[:1] not in ("{", "["):
        return False
    try:
        json.loads(v)
    except (ValueError, RecursionError):  # too deep is not parsed either (values.parse)
        return True
    return False


def search_args(rx: Any, args: Any, text: str | None) -> bool | None:
    """A regex atom over the args text (``arg_has``, ``count_with``): ``search_json``, or
    over ``unparsed`` args a match, else unknown (the JSON of the object may match)."""
    if unparsed(args):
        return True if matches(rx, text) else None
    return search_json(rx, text)


def hides_args(args: Any, text: str | None) -> bool:
    """Whether recorded args leave values out: ``<redacted>`` ones, or ``unparsed``."""
    return hides(text) or unparsed(args)


def hides(text: str | None) -> bool:
    """Whether compact JSON ``text`` (args, or a field that is an object or a list) holds a
    ``<redacted>`` value: a regex that does not match it may match what was there."""
    return text is not None and HIDDEN_TEXT in text


def opaque(value: Any) -> bool:
    """Whether a field value (``field_value``) is not wholly recorded: HIDDEN, or an object
    or list holding a ``<redacted>`` value."""
    return value is HIDDEN or (isinstance(value, (dict, list)) and hides(text_form(value)))


def hidden(value: Any) -> bool:
    """Whether a recorded value (a context value, an argument field) is not wholly recorded:
    ``<redacted>``, or an object or list holding one (SEMANTICS.md §2: not recorded)."""
    return value == REDACTED or opaque(value)


def search_json(rx: Any, text: str | None) -> bool | None:
    """``regexes.matches`` of compiled ``rx`` on JSON ``text`` that may hide values.

    Over text that hides none, the plain search. Otherwise a match proves the atom only
    inside a part between hidden values (any filling keeps that part), and no match
    there is unknown: the hidden value may have made or broken a match.
    """
    if text is None or HIDDEN_TEXT not in text:
        return matches(rx, text)
    for part in text.split(HIDDEN_TEXT):
        if matches(rx, part):
            return True
    return None


def numeric(value: Any) -> float | None:
    """A field as a finite number: int/float (not bool) or a decimal string; else None.

    Strings must be plain decimals (``" 12"``, ``"-1.5e3"``); ``nan``, ``inf``
    and ``1_000`` are not numeric.
    """
    if isinstance(value, bool):
        return None
    if not isinstance(value, (int, float)) and not (
        isinstance(value, str) and _NUMERIC.search(value)
    ):
        return None
    try:
        out = float(value)
    except OverflowError:  # an int beyond float range
        return None
    return out if math.isfinite(out) else None


def token_value(kind: str, t_in: int | None, t_out: int | None, t_total: int | None) -> int | None:
    """Tokens of ``kind`` of one LLM response, None when its usage was not recorded.

    ``total`` is the recorded total, else input + output when both are recorded.
    """
    if kind == "input":
        return t_in
    if kind == "output":
        return t_out
    if t_total is not None:
        return t_total
    if t_in is not None and t_out is not None:
        return t_in + t_out
    return None


def check_token_kind(kind: Any) -> str:
    """Validate the ``kind`` argument of ``token_count``."""
    if kind not in TOKEN_KINDS:
        raise ValueError(f"token_count kind must be one of {TOKEN_KINDS}, not {kind!r}")
    return str(kind)


def term_value(value: Any) -> Value:
    """A field or context value as a value term (``arg_value``, ``ctx_value``): a string,
    number or bool as is, anything else (list, object, null, a non-finite float) as a
    ``Composite`` of its canonical JSON text, so that equal JSON compares equal."""
    if isinstance(value, (str, bool, int)) or (isinstance(value, float) and math.isfinite(value)):
        return value
    return Composite(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def evidence_is(args: Any, name: str, want: Any) -> bool | None:
    """Whether an evidence event's ``name`` (verdict, action) is ``want``, in any case
    (Sponsio upper-cases verdicts and lower-cases actions); None when not recorded."""
    if not isinstance(args, dict) or args.get(name) is None:
        return None
    return text_form(args[name]).casefold() == arg_text(want).casefold()
