"""The two evaluation engines: events × contracts → the raw verdict table.

Views (SEMANTICS.md §1): a contract sees the events of its atoms' types,
restricted to its agent; stateful atoms are grounded over all of that
agent's events and read at the view's positions, run atoms over the view's
positions (``atoms.view``: both engines pass ``view_types``). A contract of one agent
on a trace where that agent has no event is ``not_applicable`` there.
``segregation_of_duty`` contracts (``per_agent``) are evaluated on each
agent's events apart; the trace violates when any agent does (blame: the
earliest blamed event; offending: all of them).

``reference_raw`` is the obviously-correct path (online grounding and
``contract.judge`` per trace); ``columnar_raw`` the fast path (grounding
and evaluation vectorised over every trace, the monitor for the blame of
the few shapes the scans do not cover). Both return ``RAW_SCHEMA`` rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms import view
from sponsio_audit.atoms.online import ground_events
from sponsio_audit.event import event_from_row, resolve_prompts
from sponsio_audit.ltl.contract import Contract, judge
from sponsio_audit.threads import resolve
from sponsio_audit.verdicts import RAW_SCHEMA, TEXT, as_text
from sponsio_audit.vocab import NOT_APPLICABLE, UNVERIFIABLE, VIOLATED

Perms = Mapping[str, frozenset[str]]
Row = dict[str, Any]


def _row(trace_id: str, contract: Contract, g: int, verdict: str, **kw: Any) -> Row:
    return {
        "trace_id": trace_id,
        "contract_id": contract.id,
        "guarantee": g,
        "verdict": verdict,
        "kind": kw.get("kind"),
        "blame_row": kw.get("blame_row"),
        "opened_row": kw.get("opened_row"),
        "offending_rows": list(kw.get("offending_rows", ())),
        "reason": kw.get("reason"),
    }


def _not_applicable(trace_id: str, contract: Contract) -> list[Row]:
    return [
        _row(trace_id, contract, g, NOT_APPLICABLE, reason="agent has no event in the trace")
        for g in range(len(contract.guarantees))
    ]


def merge_per_agent(parts: Sequence[Sequence[Row]]) -> list[Row]:
    """One row per guarantee from per-agent rows: violated if any part is, else
    unverifiable if any is, else the first part's verdict."""
    out = []
    for same in zip(*parts, strict=True):
        bad = [r for r in same if r["verdict"] == VIOLATED]
        if bad:
            first = min(bad, key=lambda r: -1 if r["blame_row"] is None else r["blame_row"])
            merged = dict(first)
            merged["offending_rows"] = sorted({x for r in bad for x in r["offending_rows"]})
            out.append(merged)
        elif unknown := [r for r in same if r["verdict"] == UNVERIFIABLE]:
            out.append(dict(unknown[0]))
        else:
            out.append(dict(same[0]))
    return out


# ---------------------------------------------------------------- reference engine


def _trace_rows(
    trace_id: str, contract: Contract, rows: list[Row], idxs: list[int], perms: Perms
) -> list[Row]:
    if contract.agent != "*" and not any(rows[i]["agent"] == contract.agent for i in idxs):
        return _not_applicable(trace_id, contract)
    atoms = contract.atoms()
    parts = []
    for sub in view.groups(contract, [rows[i]["agent"] for i in idxs]):
        group = [idxs[j] for j in sub]
        evs = [event_from_row(rows[i]) for i in group]
        vals = ground_events(atoms, evs, perms, view.view_types(contract))
        seen = view.positions(contract, [rows[i]["type"] for i in group])
        at = [group[p] for p in seen]  # view position -> events row
        parts.append(
            [
                _row(
                    trace_id,
                    contract,
                    v.guarantee,
                    v.verdict,
                    kind=v.kind,
                    blame_row=None if v.blame is None else at[v.blame],
                    opened_row=None if v.opened is None else at[v.opened],
                    offending_rows=[at[p] for p in v.offending],
                    reason=v.reason,
                )
                for v in judge(contract, [vals[p] for p in seen])
            ]
        )
    return parts[0] if len(parts) == 1 else merge_per_agent(parts)


def empty_raw(trace_ids: Iterable[str], contracts: Sequence[Contract], perms: Perms) -> pa.Table:
    """Raw verdicts of traces with no events (a root span and nothing else): each is a
    trace (n = 0, SEMANTICS.md §1), judged like any other, never dropped."""
    out: list[Row] = []
    for trace_id in trace_ids:
        for c in contracts:
            out.extend(_trace_rows(trace_id, c, [], [], perms))
    return pa.Table.from_pylist(out, schema=RAW_SCHEMA)


def reference_raw(events: pa.Table, contracts: Iterable[Contract], perms: Perms) -> pa.Table:
    """Raw verdicts by the reference engine: online grounding and ``judge`` per trace."""
    rows = resolve_prompts(events.to_pylist())
    traces: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        traces.setdefault(r["trace_id"], []).append(i)
    out: list[Row] = []
    for trace_id, idxs in traces.items():
        for c in contracts:
            out.extend(_trace_rows(trace_id, c, rows, idxs, perms))
    return pa.Table.from_pylist(out, schema=RAW_SCHEMA)


# ---------------------------------------------------------------- columnar engine


def columnar_raw(
    events: pa.Table, contracts: Sequence[Contract], perms: Perms, threads: int = 1
) -> pa.Table:
    """Raw verdicts by the columnar engine: one grounding per (agent filter, per-agent)
    group of contracts, one evaluator per view, all traces at once; atoms grounded and
    contracts judged on ``threads`` threads (0: ``threads.resolve``'s choice)."""
    from sponsio_audit.atoms.columnar import Grounding
    from sponsio_audit.atoms.grounded import ground_contracts
    from sponsio_audit.ltl.columnar import Segments, evaluate_contracts
    from sponsio_audit.ltl.monitor import monitor_check

    if events.num_rows == 0 or not contracts:
        return RAW_SCHEMA.empty_table()
    threads = resolve(threads, events.num_rows)
    layout = Segments.of_ids(events.column("trace_id"))
    trace, n = layout.seg, layout.n_segments
    trace_ids = events.column("trace_id").take(pa.array(layout.first_rows())).combine_chunks()
    groups: dict[tuple[str, bool], list[Contract]] = {}
    for c in contracts:
        groups.setdefault((c.agent, c.per_agent), []).append(c)
    tables = []
    for (agent, per_agent), cs in groups.items():
        table, grounded, tr, rowmap, present = view.agent_table(events, trace, n, agent, per_agent)
        # the trace layout, and the grounding's type codes for the views, are shared when
        # both see the same table (not after an agent filter or a per-agent regrouping)
        same = grounded is events
        grounding = Grounding(grounded, perms, layout if same else None)
        cols = ground_contracts(grounding, cs, threads)
        views = view.Views(
            table, None if same else tr, None if same else n, index=grounding if same else None
        )
        jobs = [(c, views.of(c), cols[view.view_types(c)]) for c in cs]
        out = evaluate_contracts(jobs, monitor_check, threads)
        tables.append(_to_raw(out, rowmap, trace_ids, present, per_agent, cs))
    return pa.concat_tables(tables)


def _map_rows(rows: pa.ChunkedArray, rowmap: np.ndarray) -> pa.Array:
    """Row numbers of a filtered/reordered table mapped back to the events table."""
    return pc.take(pa.array(rowmap), rows)


def _to_raw(
    out: pa.Table,
    rowmap: np.ndarray,
    trace_ids: pa.Array,
    present: np.ndarray,
    per_agent: bool,
    contracts: Sequence[Contract],
) -> pa.Table:
    """The columnar result (trace numbers, rows of a filtered table) as RAW_SCHEMA rows."""
    off = out.column("offending_rows").combine_chunks()
    flat = _map_rows(off.flatten(), rowmap)
    offending = pa.ListArray.from_arrays(off.offsets, flat)
    trace_no = out.column("trace").to_numpy()
    # trace and contract ids as codes into their distinct values, not a copy per row
    raw = pa.table(
        {
            "trace_id": pa.DictionaryArray.from_arrays(
                pa.array(trace_no.astype(np.int32)), trace_ids
            ),
            "contract_id": as_text(out.column("contract")),
            "guarantee": out.column("guarantee"),
            "verdict": out.column("verdict").cast(TEXT),
            "kind": out.column("kind").cast(TEXT),
            "blame_row": _map_rows(out.column("blame_row"), rowmap),
            "opened_row": _map_rows(out.column("opened_row"), rowmap),
            "offending_rows": offending,
            "reason": out.column("reason"),
        },
        schema=RAW_SCHEMA,
    )
    absent = ~present[trace_no]
    if absent.any():  # an agent's contract on a trace without that agent
        by_id = {c.id: c for c in contracts}
        na = {
            (r["trace_id"], r["contract_id"])
            for r in raw.filter(pa.array(absent)).select(["trace_id", "contract_id"]).to_pylist()
        }
        fixed = [row for t, cid in sorted(na) for row in _not_applicable(t, by_id[cid])]
        raw = pa.concat_tables(
            [raw.filter(pa.array(~absent)), pa.Table.from_pylist(fixed, schema=RAW_SCHEMA)]
        )
    if per_agent:  # several segments per (trace, contract): merge them
        rows = raw.to_pylist()
        keyed: dict[tuple[str, str], list[list[Row]]] = {}
        for r in rows:
            parts = keyed.setdefault((r["trace_id"], r["contract_id"]), [])
            if r["guarantee"] == 0:
                parts.append([])
            parts[-1].append(r)
        merged = [row for parts in keyed.values() for row in merge_per_agent(parts)]
        raw = pa.Table.from_pylist(merged, schema=RAW_SCHEMA)
    return raw
