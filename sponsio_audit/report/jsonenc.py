"""Indented JSON text, by orjson, byte for byte what ``json.dumps(indent=2)`` writes.

The stdlib's indented encoder is pure Python (its C accelerator serves only
compact output), so a large report spent more time being written than
being computed. orjson writes the same text for the plain values a report
holds (dicts with string keys, lists, tuples, strings, ints, bools, None),
non-ASCII kept as UTF-8 and control characters escaped alike. Whatever it
would write differently or refuses goes to the stdlib, so the text never
changes: floats (orjson spells ``1e-05`` as ``0.00001`` and NaN as
``null``), any other type or subclass, non-string keys, integers beyond 64
bits and lone surrogates.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_PLAIN = (str, int, bool, type(None))


def dumps(doc: Any) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)``, by orjson whenever that is the same."""
    if _plain(doc):
        try:
            return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
        except (orjson.JSONEncodeError, TypeError):
            pass  # a >64-bit integer, a lone surrogate, a non-string key
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _plain(doc: Any) -> bool:
    """True when ``doc`` holds only dicts, lists, tuples, str, int, bool and None (exact
    types: a subclass may serialise differently)."""
    stack = [doc]
    pop, push = stack.pop, stack.append
    while stack:
        x = pop()
        t = type(x)
        if t is dict:
            for v in x.values():
                if type(v) not in _PLAIN:
                    push(v)
        elif t is list or t is tuple:
            for v in x:
                if type(v) not in _PLAIN:
                    push(v)
        elif t not in _PLAIN:
            return False
    return True
