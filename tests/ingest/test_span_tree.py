"""The span tree's walk (SEMANTICS.md §1 tie order): pre-order, siblings by file position.

``span_tree.walk`` takes a shortcut when the file order already is the walk;
both its paths must give what the rule says, checked against a plain recursive
walk written from the rule (roots in file order, then spans only a cycle
reaches; a parent is the first span with that id; itself or absent: a root).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest.span_tree import walk


def _by_the_rule(span: list[Any], parent: list[Any]) -> tuple[list[int], list[int]]:
    first: dict[Any, int] = {}
    for i, s in enumerate(span):
        if s is not None:
            first.setdefault(s, i)
    up = [first.get(p, -1) if p is not None else -1 for p in parent]
    up = [-1 if p == i else p for i, p in enumerate(up)]
    kids: dict[int, list[int]] = {}
    for i, p in enumerate(up):
        if p >= 0:
            kids.setdefault(p, []).append(i)
    order: list[int] = []

    def visit(i: int) -> None:
        if i in order:
            return
        order.append(i)
        for k in kids.get(i, []):
            visit(k)

    for i in [i for i, p in enumerate(up) if p < 0] + list(range(len(span))):
        visit(i)
    rank = [order.index(i) for i in range(len(span))]
    cut = [p if p >= 0 and rank[p] < rank[i] else -1 for i, p in enumerate(up)]
    return order, cut


IDS = st.one_of(st.none(), st.sampled_from("abcdefg"))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(IDS, IDS), max_size=12))
def test_walk_is_the_pre_order_of_the_rule(pairs: list[tuple[Any, Any]]) -> None:
    span = [s for s, _ in pairs]
    parent = [p for _, p in pairs]
    order, rank, par, unique = walk(span, parent)
    want_order, want_par = _by_the_rule(span, parent)
    assert list(order) == want_order
    assert [rank[i] for i in want_order] == list(range(len(span)))
    assert list(par) == want_par
    assert unique == (None not in span and len(set(span)) == len(span))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_file_already_in_walk_order_keeps_it(data: st.DataObject) -> None:
    """Spans written parent first, subtrees whole (a pre-order): the walk is the file order."""
    n = data.draw(st.integers(1, 15))
    parent: list[Any] = [None]
    stack = [0]
    for i in range(1, n):
        depth = data.draw(st.integers(0, len(stack)))
        stack = stack[:depth]
        parent.append(f"s{stack[-1]}" if stack else None)
        stack.append(i)
    order, _, _, _ = walk([f"s{i}" for i in range(n)], parent)
    assert list(order) == list(range(n))


def test_children_written_before_their_parent_follow_it() -> None:
    # an exporter writing spans as they end: the tool, then the LLM, then the agent root
    order, _, par, _ = walk(["t", "l", "a"], ["a", "a", None])
    assert list(order) == [2, 0, 1] and par == [2, 2, -1]
