"""Residuals of the incremental monitor: what a node's value still depends on.

A residual is a Kleene constant (True, False, None) or a positive formula
over *leaves* (pending obligations at the next position, numbered by the
monitor), kept in DNF with absorption so that it stays small. ``r_or`` and
``r_and`` combine residuals; ``open_value`` reads one with an open future.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Union

from sponsio_audit.ltl.reference import K

Dnf = frozenset[frozenset[int]]
"""A disjunction of conjunctions of leaf ids (``UNKNOWN_LEAF`` is the unknown constant)."""
Res = Union[bool, None, Dnf]
"""A residual: a Kleene constant, or a DNF that is not equivalent to one."""

UNKNOWN_LEAF = -1
_UNKNOWN_TERM = frozenset([UNKNOWN_LEAF])


def _lift(r: Res) -> Dnf:
    if isinstance(r, frozenset):
        return r
    return frozenset([frozenset()] if r else [_UNKNOWN_TERM] if r is None else [])


def _norm(terms: Iterable[frozenset[int]]) -> Res:
    """Keep the minimal terms (absorption); give constants as Python values."""
    keep: list[frozenset[int]] = []
    for t in sorted(set(terms), key=len):
        if not any(k <= t for k in keep):
            keep.append(t)
    if len(keep) > 1:
        return frozenset(keep)
    if not keep:
        return False
    return True if not keep[0] else None if keep[0] == _UNKNOWN_TERM else frozenset(keep)


def r_or(a: Res, b: Res) -> Res:
    """Kleene disjunction of residuals."""
    if a is True or b is True:
        return True
    if a is False or a == b:
        return b
    if b is False:
        return a
    return _norm(_lift(a) | _lift(b))


def r_and(a: Res, b: Res) -> Res:
    """Kleene conjunction of residuals."""
    if a is False or b is False:
        return False
    if a is True or a == b:
        return b
    if b is True:
        return a
    return _norm(x | y for x in _lift(a) for y in _lift(b))


def open_value(r: Res) -> K:
    """Value with an open future: every pending leaf counts as true."""
    if not isinstance(r, frozenset):
        return r
    return True if any(UNKNOWN_LEAF not in t for t in r) else None
