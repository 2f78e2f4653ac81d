"""The rare state atoms of the columnar grounding: flow, ctx, ctx_matches, delegation_depth.

``ctx``/``ctx_matches`` are a keep-last scan over the context_updates that
set the key. ``flow`` and ``delegation_depth`` propagate along agents, so
they replay the online grounder's ``Journal`` trace by trace on only the
rows that can change them (data reads/writes, messages, delegations) and
spread the result with scans: Python per such row, not per event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from sponsio_audit.atoms import fields, scans
from sponsio_audit.atoms.columns import Column, Columns, bool_column, num_column
from sponsio_audit.atoms.journal import Journal
from sponsio_audit.event import Event
from sponsio_audit.regexes import compile_regex, matches


def _events(g: Columns, at: np.ndarray) -> list[Event]:
    """The events of rows ``at`` with the fields flow and delegation depth read."""
    sub = g.table.select(["type", "agent", "target"]).take(pa.array(at, pa.int64()))
    cols = [sub.column(c).to_pylist() for c in ("type", "agent", "target")]
    return [Event(type=k, agent=a, target=t) for k, a, t in zip(*cols, strict=True)]


def _replay(
    g: Columns, rows: np.ndarray, journal: Journal, read: Callable[[Journal, Event], float]
) -> np.ndarray:
    """Track the events at ``rows`` trace by trace; ``read(journal, event)`` after each."""
    at = np.flatnonzero(rows)
    value = np.zeros(g.n, dtype=np.float64)
    prev = -1
    for i, e in zip(at.tolist(), _events(g, at), strict=True):
        if g.start[i] != prev:
            journal.reset()
            prev = int(g.start[i])
        journal.track(e)
        value[i] = read(journal, e)
    return value


def _flow(g: Columns, src: Any, dst: Any) -> Column:
    rows = g.is_type("data_write") | g.is_type("data_read")
    rows |= g.is_type("message") | g.is_type("delegation")
    s, d = str(src), str(dst)
    value = _replay(g, rows, Journal(flow=True), lambda j, e: s != d and s in j.carries(d))
    return bool_column(*scans.keep_last(rows, value > 0, np.zeros(g.n, bool), g.start))


def _ctx_atom(g: Columns, k: Any, test: Callable[[str], bool | None]) -> Column:
    """Keep-last of the latest context_update that set top-level key k (``test`` None:
    unknown, a regex that ran out of time)."""
    key = str(k)
    updates = g.is_type("context_update")
    sets = g.per_args(updates, "context_update", lambda a: isinstance(a, dict) and key in a, bool)

    def code(a: Any) -> int:  # 0 no, 1 yes, 2 unknown; the test runs once per distinct args
        if key not in a:
            return 0
        if fields.hidden(a[key]):  # ``<redacted>`` by the exporter: not recorded
            return 2
        got = test(fields.text_form(a[key]))
        return 2 if got is None else int(got)

    codes = g.per_args(updates, "context_update", code, np.int8)
    hit, late = codes == 1, codes == 2
    return bool_column(*scans.keep_last(sets, hit, late, g.start, False, True))


def _ctx(g: Columns, k: Any, v: Any) -> Column:
    want = fields.arg_text(v)
    return _ctx_atom(g, k, lambda cur: cur == want)


def _ctx_matches(g: Columns, k: Any, regex: Any) -> Column:
    rx = compile_regex(str(regex))
    return _ctx_atom(g, k, lambda cur: matches(rx, cur))


def _delegation_depth(g: Columns) -> Column:
    """Depths set at hops (replayed), read at every row as its subject's latest depth."""
    hops = g.is_type("message") | g.is_type("delegation")
    reached = _replay(g, hops, Journal(depth=True), lambda j, e: j.depth(e.target))
    (agent, target), names = g.agent_codes()
    subject = np.where(g.is_type("delegation") & ~g.isnull("target"), target, agent)
    # one stream of updates (hops, keyed by target) and reads (rows of traces with a hop)
    ups = np.flatnonzero(hops & ~g.isnull("target"))
    reads = np.flatnonzero(np.isin(g.start, g.start[ups]))
    row = np.concatenate([ups, reads])
    group = g.start[row] * (len(names) + 1) + np.concatenate([target[ups], subject[reads]])
    is_read = np.concatenate([np.zeros(len(ups), bool), np.ones(len(reads), bool)])
    order = np.lexsort((is_read, row, group))
    group, row, is_read = group[order], row[order], is_read[order]
    val = np.concatenate([reached[ups], np.zeros(len(reads))])[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = group[1:] != group[:-1]
    start = scans.starts_from_flags(first)
    value, _ = scans.keep_last(~is_read, val, np.zeros(len(val), bool), start)
    out = np.zeros(g.n)
    out[row[is_read]] = value[is_read]
    return num_column(out)


STATE_ATOMS: dict[str, Callable[..., Column]] = {
    "flow": _flow,
    "ctx": _ctx,
    "ctx_matches": _ctx_matches,
    "delegation_depth": _delegation_depth,
}
