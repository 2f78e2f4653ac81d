"""The span tree of one trace: its pre-order walk and each span's parent (SEMANTICS.md §1).

Siblings follow their file positions; roots come in file order, then whatever
a cycle left unvisited; a span whose parent is absent (or in a cycle, or
itself) is a root; a span id seen twice names its first copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def walk(
    span: Sequence[Any], parent: Sequence[Any]
) -> tuple[Sequence[int], Sequence[int], list[int], bool]:
    """The spans' pre-order walk, each span's rank in it, its parent index (-1 for a root;
    links against the walk, cycles, cut) and whether every span id is set and distinct.

    Siblings follow their file positions; roots in file order, then whatever a cycle left.
    Exporters often write a trace in this order already (``range`` is then the walk).
    """
    n = len(span)
    first = dict(zip(span, range(n), strict=True))
    unique = len(first) == n and None not in first
    if not unique:
        first = {}
        for i, sid in enumerate(span):
            if sid is not None and sid not in first:
                first[sid] = i
    get = first.get
    par = [get(p, -1) for p in parent]  # None is never a key: no parent
    stack: list[int] = []
    for i, p in enumerate(par):
        if p < 0 or p == i:
            par[i] = -1
            stack.clear()
        else:
            while stack and stack[-1] != p:
                stack.pop()
            if not stack:
                break
        stack.append(i)
    else:
        walk = range(n)
        return walk, walk, par, unique
    order, rank = _preorder(par)
    return (
        order,
        rank,
        [p if p >= 0 and rank[p] < rank[i] else -1 for i, p in enumerate(par)],
        unique,
    )


def _preorder(par: list[int]) -> tuple[list[int], list[int]]:
    """Pre-order walk and ranks of the tree ``par`` (parents by index; -1 or self: a root)."""
    n = len(par)
    children: dict[int, list[int]] = {}  # only spans with children: most spans are leaves
    roots = []
    for i, p in enumerate(par):
        if p < 0 or p == i:
            roots.append(i)
            par[i] = -1
        else:
            kids = children.get(p)
            if kids is None:
                children[p] = [i]
            else:
                kids.append(i)
    rank = [-1] * n
    order: list[int] = []
    for start in [*roots, *range(n)]:
        if rank[start] >= 0:
            continue
        stack = [start]
        while stack:
            i = stack.pop()
            if rank[i] >= 0:
                continue
            rank[i] = len(order)
            order.append(i)
            kids = children.get(i)
            if kids is not None:
                stack.extend(reversed(kids))
    return order, rank
