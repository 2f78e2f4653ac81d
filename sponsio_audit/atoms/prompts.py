"""The LLM inputs of an events table for the columnar prompt atoms, shared prompts resolved.

A transcript's requests re-send the whole history, so ingest stores each
input that starts a later one once (``event.EVENT_SCHEMA``'s
``prompt_from``/``prompt_chars``): the row's input is the first
``prompt_chars`` characters of the ``prompt`` of the row of its trace whose
``seq`` is ``prompt_from`` (``event.shared_prompt``). Here each such row is
matched to that holder row once; lengths come from ``prompt_chars`` and
regexes run over the prefixes a bounded batch at a time (``regex_hits``, the
function inline prompts use), so memory stays linear in the stored text. A
row whose holder is not in the table, has no prompt or a shorter one has no
input (unknown, never a guess).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms.columns import Columns, regex_hits, to_numpy
from sponsio_audit.regexes import compile_regex, is_backtracking

BATCH_CHARS = 32 << 20
"""Characters of prefixes written out at once for one regex search."""


@dataclass(frozen=True, eq=False)
class Inputs:
    """Per row: whether the input is missing; the shared rows and holders (lengths: ``lengths``)."""

    missing: np.ndarray
    shared: np.ndarray
    """Rows whose input is a resolved shared prompt."""
    holder: np.ndarray
    """The holder row of each ``shared`` row."""
    chars: np.ndarray
    """The input length of each ``shared`` row."""


def _has(g: Columns, name: str) -> bool:
    return name in g.table.schema.names


def inputs(g: Columns) -> Inputs:
    """The table's LLM inputs (cached on the grounding)."""

    def make() -> Inputs:
        inline = ~g.isnull("prompt")
        empty = np.zeros(0, dtype=np.int64)
        if not (_has(g, "prompt_from") and _has(g, "prompt_chars")):
            return Inputs(~inline, empty, empty, empty)
        want = np.flatnonzero(~inline & ~g.isnull("prompt_from") & ~g.isnull("prompt_chars"))
        if not len(want):
            return Inputs(~inline, empty, empty, empty)
        seq, _ = g.raw("seq")
        src, _ = g.raw("prompt_from")
        chars, _ = g.raw("prompt_chars")
        seg = np.asarray(g.segments.seg, dtype=np.int64)
        ok = (seq >= 0) & (seq < 1 << 32)
        keys = np.where(ok, (seg << 32) | np.where(ok, seq, 0), -1)
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        s_ok = (src[want] >= 0) & (src[want] < 1 << 32)
        target = (seg[want] << 32) | np.where(s_ok, src[want], 0)
        at = np.minimum(np.searchsorted(sorted_keys, target), len(keys) - 1)
        holder = order[at]
        c = chars[want]
        held = to_numpy(pc.utf8_length(g.col("prompt").take(pa.array(holder))), -1)
        good = s_ok & (sorted_keys[at] == target) & inline[holder] & (c >= 0) & (held >= c)
        shared, holder, c = want[good], holder[good], c[good].astype(np.int64)
        missing = ~inline
        missing[shared] = False
        return Inputs(missing, shared, holder, c)

    result: Inputs = g.cached("prompt inputs", make)
    return result


def lengths(g: Columns) -> np.ndarray:
    """Each row's input length in characters (0 where missing), shared prompts resolved;
    apart from ``inputs`` because only ``context_length`` reads it (cached)."""

    def make() -> np.ndarray:
        ins = inputs(g)
        length = to_numpy(pc.utf8_length(g.col("prompt")), 0).astype(np.int64)
        length[ins.shared] = ins.chars
        return length

    result: np.ndarray = g.cached("prompt lengths", make)
    return result


_END_SENSITIVE = ("$", "\\b", "\\B", "\\z", "\\Z")


def prefix_monotone(regex: str) -> bool:
    """Whether a match in a text is a match in every longer text that starts with it: an
    RE2 regex with no assertion that looks at or past the end of its match (``$``, ``\\b``,
    ``\\B``, ``\\z``; lookaround runs in the backtracking engine and never counts). Then
    along one holder's prefixes the result goes from no match to match once, and a binary
    search finds where (conservative: a ``$`` anywhere in the pattern rules it out)."""
    return not is_backtracking(compile_regex(regex)) and not any(t in regex for t in _END_SENSITIVE)


def shared_hits(g: Columns, regex: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(match, ran out of time) of ``regex`` in the shared inputs at ``rows``."""
    ins = inputs(g)
    hit = np.zeros(g.n, dtype=bool)
    late = np.zeros(g.n, dtype=bool)
    pick = rows[ins.shared] if len(ins.shared) else np.zeros(0, dtype=bool)
    at, holder, chars = ins.shared[pick], ins.holder[pick], ins.chars[pick]
    if prefix_monotone(regex):
        _first_hits(g, regex, at, holder, chars, hit)
        return hit, late
    prompts = g.col("prompt")
    i = 0
    while i < len(at):
        j, total, texts = i, 0, {}
        while j < len(at) and (j == i or total + chars[j] <= BATCH_CHARS):
            total += int(chars[j])
            j += 1
        batch = []
        for k in range(i, j):
            h = int(holder[k])
            if h not in texts:
                texts = {h: prompts[h].as_py()}  # rows of one holder come together
            batch.append(texts[h][: int(chars[k])])
        h_hit, h_late = regex_hits(pa.array(batch, pa.string()), regex)
        hit[at[i:j]] = h_hit
        late[at[i:j]] = h_late
        i = j
    return hit, late


def _first_hits(
    g: Columns, regex: str, at: np.ndarray, holder: np.ndarray, chars: np.ndarray, hit: np.ndarray
) -> None:
    """Set ``hit`` for a ``prefix_monotone`` regex: per holder, its prefixes in increasing
    length, the first that matches found by binary search (log₂ n searches, not n)."""
    if not len(at):
        return
    prompts = g.col("prompt")
    order = np.lexsort((chars, holder))
    at, holder, chars = at[order], holder[order], chars[order]
    bounds = np.flatnonzero(np.r_[True, holder[1:] != holder[:-1], True])
    for a, b in itertools.pairwise(bounds):
        text = prompts[int(holder[a])].as_py()

        def matches(k: int, text: str = text) -> bool:
            found, _ = regex_hits(pa.array([text[: int(chars[k])]], pa.string()), regex)
            return bool(found[0])

        lo, hi = int(a), int(b)  # prefixes before lo do not match; from hi on they do
        while lo < hi:
            mid = (lo + hi) // 2
            if matches(mid):
                hi = mid
            else:
                lo = mid + 1
        hit[at[lo:b]] = True
