"""The sentence that says why a verdict is neither pass nor violated.

An *unverifiable* verdict names the first atom of its clause that is unknown in
the contract's view, the step (the event's ``seq``) and what the trace did not
record there, with how to record it for the event's convention, e.g.
``arg_field_has(bash, command, …) unknown at step 3: bash was called but its
arguments were not recorded (enable content capture: …)``. A *skipped*
verdict names the clause that needs an LLM judge (``needs an LLM judge: toxic_free``). Pass and
violated verdicts have no reason; not_applicable keeps the engine's.

Explaining grounds only the traces that need it, with the online grounder,
and stops at the first unknown atom (SEMANTICS.md §2, §5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms import view
from sponsio_audit.atoms.arrays import nonzero
from sponsio_audit.atoms.fields import hidden, normalise_tool, unparsed
from sponsio_audit.atoms.online import Grounder
from sponsio_audit.atoms.registry import TOOL, spec_of
from sponsio_audit.event import Event, event_from_row, shared_prompt
from sponsio_audit.ltl.ast import Atom, Formula, atoms
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.redact import REDACTED
from sponsio_audit.vocab import ASSUMPTION_UNKNOWN, SKIPPED, UNVERIFIABLE

CAPTURE = {
    "gen_ai": "enable content capture: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, "
    "or export the OTLP logs",
    "gen_ai_deprecated": "enable content capture: "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, or export the OTLP logs",
    "openllmetry": "enable content capture: TRACELOOP_TRACE_CONTENT=true",
    "openinference": "the instrumentation hid it: unset OPENINFERENCE_HIDE_INPUTS and "
    "OPENINFERENCE_HIDE_OUTPUTS",
    "sponsio_session": "Sponsio session logs hold no arguments: export the guard's OTLP spans",
}
"""How to record content, by the event's convention (the hint of a reason)."""

_ARG_ATOMS = frozenset(
    {"arg_has", "arg_field_has", "arg_eq", "arg_paths_within", "called_with", "count_with"}
)
_FIELD_ATOMS = frozenset({"arg_length", "arg_numeric", "arg_value"})
_EVIDENCE_ATOMS = frozenset({"claim_emitted", "evidence_verdict", "evidence_action"})
_INPUT_ATOMS = frozenset({"llm_input_contains", "system_prompt_present", "context_length"})
MAX_ARG = 24


def atom_text(a: Atom) -> str:
    """An atom as the reader wrote it, long arguments cut: ``arg_has(bash, rm\\s+…)``."""
    args = [str(x) if len(str(x)) <= MAX_ARG else str(x)[:MAX_ARG] + "…" for x in a.args]
    return f"{a.name}({', '.join(args)})"


def _hint(e: Event) -> str:
    h = CAPTURE.get(e.convention or "")
    return f" ({h})" if h else ""


def _why(a: Atom, e: Event, before: Sequence[Event]) -> str:
    """What the trace did not record at ``e`` (or before it) that leaves ``a`` unknown."""
    name = spec_of(a.name, a.args).name
    nameless = next((x for x in (*before, e) if x.type == TOOL and x.tool is None), None)
    if nameless is not None and e.type == TOOL and name not in ("called_any", "perm"):
        at = "" if nameless is e else f" at step {nameless.seq}"
        return f"a tool was called{at} but the trace did not record which" + _hint(nameless)
    tool = e.tool or "the tool"
    if name == "arg_value" and not any(_calls(x, a.args[0]) for x in (*before, e)):
        return f"{a.args[0]} was not called yet, so its field {a.args[1]} has no value"
    if name in _EVIDENCE_ATOMS:
        if e.tool is None:
            return "an evidence event did not record its predicate"
        entry = "action" if name == "evidence_action" else "verdict"
        return f"the evidence event of {e.tool} recorded no {entry}" + _hint(e)
    if (name in _ARG_ATOMS or name in _FIELD_ATOMS) and e.args is None:
        return f"{tool} was called but its arguments were not recorded" + _hint(e)
    if name in _ARG_ATOMS or name in _FIELD_ATOMS:
        if unparsed(e.args):
            return (
                f"{tool}'s arguments were recorded as text that is not JSON "
                "(a Python repr, or JSON cut short), so their fields are not known"
            )
        keys = _hidden_keys(e.args)
        if keys:  # SEMANTICS.md §2: a value the exporter hid is not recorded
            return (
                f"{tool}'s arguments hide {', '.join(keys)} as {REDACTED} "
                "(redacted by the exporter)"
            )
    if name in _ARG_ATOMS:  # arguments recorded, yet unknown: only a search out of time
        return (
            f"the regex search of {tool}'s arguments ran out of time "
            "(regex_timeout_ms, --regex-timeout-ms)"
        )
    if name in _FIELD_ATOMS:
        return f"{tool}'s arguments have no usable field {a.args[1]}"
    if name == "output_has":
        return f"{tool} was called but its result was not recorded" + _hint(e)
    if name == "latency_exceeds":
        return f"{tool} was called but its end time was not recorded"
    if name == "llm_output_contains":
        return "the LLM's output was not recorded" + _hint(e)
    if name in _INPUT_ATOMS:
        return "the LLM's input was not recorded" + _hint(e)
    if name == "token_count":
        miss = next((x for x in (*before, e) if x.type == "llm_response" and _no_usage(x)), e)
        return f"the LLM response at step {miss.seq} recorded no token usage"
    if name in ("ctx", "ctx_matches", "ctx_value"):
        key = str(a.args[0])
        update = next((x for x in reversed((*before, e)) if _sets(x, key)), None)
        if update is None:
            return f"no context_update recorded {key}"
        if hidden((update.args or {})[key]):  # SEMANTICS.md §2: a value the exporter hid
            return (
                f"the context_update at step {update.seq} hides {key} as {REDACTED} "
                "(redacted by the exporter)"
            )
    return "the recorded facts do not decide it (e.g. a regex ran out of time)"


def _sets(e: Event, key: str) -> bool:
    """Whether ``e`` is a context_update that sets ``key``."""
    return e.type == "context_update" and isinstance(e.args, dict) and key in e.args


def _hidden_keys(args: Any, at: str = "") -> list[str]:
    """The dotted names of the ``<redacted>`` values of ``args`` (at most 3)."""
    found: list[str] = []
    items = (
        args.items()
        if isinstance(args, dict)
        else enumerate(args)
        if isinstance(args, list)
        else ()
    )
    for k, v in items:
        name = f"{at}{k}"
        if v == REDACTED:
            found.append(name)
        elif isinstance(v, (dict, list)):
            found += _hidden_keys(v, name + ".")
    return found[:3]


def _calls(e: Event, tool: Any) -> bool:
    return e.type == TOOL and normalise_tool(e.tool) == normalise_tool(str(tool))


def _no_usage(e: Event) -> bool:
    return e.tokens_total is None and (e.tokens_in is None or e.tokens_out is None)


def _first_unknown(contract: Contract, formula: Formula, rows: list[dict[str, Any]]) -> str:
    """``<atom> unknown at step <seq>: <why>`` for the first unknown atom in the view."""
    used = atoms(formula)
    evs = [event_from_row(r) for r in rows]
    reads_input = any(spec_of(a.name, a.args).name in _INPUT_ATOMS for a in used)
    held = {r["seq"]: r["prompt"] for r in rows if r.get("prompt") is not None}
    for group in view.groups(contract, [e.agent for e in evs]):
        sub = [evs[j] for j in group]
        seen = set(view.positions(contract, [e.type for e in sub]))
        g = Grounder(used, view=view.view_types(contract))
        for k, e in enumerate(sub):
            r = rows[group[k]]
            if reads_input and e.prompt is None and r.get("prompt_from") is not None:
                # a shared prompt, written out for this step only (memory stays linear)
                text = shared_prompt(held.get(r["prompt_from"]), r.get("prompt_chars"))
                e = replace(e, prompt=text)
            vals = g.ground(e)
            if k not in seen:
                continue
            for a in used:
                if vals[a] is None:
                    return f"{atom_text(a)} unknown at step {e.seq}: {_why(a, e, sub[:k])}"
    return "the recorded facts do not decide it"


def explain(raw: pa.Table, events: pa.Table, contracts: Sequence[Contract]) -> pa.Array:
    """The ``reason`` column of ``raw`` (RAW_SCHEMA) with every unverifiable and skipped
    verdict explained (``events`` sorted by trace and seq, as the engines read them)."""
    verdict = raw.column("verdict")  # a dictionary column: is_in reads its values once
    undecided = pc.fill_null(
        pc.is_in(verdict, value_set=pa.array([UNVERIFIABLE, SKIPPED], pa.string())), False
    )
    where = nonzero(undecided)
    if not len(where):
        return raw.column("reason")
    # only the undecided rows are read into Python (a verdict table can hold millions)
    picked = raw.select(["trace_id", "contract_id", "guarantee", "verdict", "reason"]).take(where)
    tids = picked.column("trace_id").to_pylist()
    cids = picked.column("contract_id").to_pylist()
    gs = picked.column("guarantee").to_pylist()
    verdicts = picked.column("verdict").to_pylist()
    reasons = picked.column("reason").to_pylist()
    todo = range(len(tids))
    by_id = {c.id: c for c in contracts}
    need = sorted({tids[i] for i in todo if verdicts[i] == UNVERIFIABLE})
    rows: dict[str, list[dict[str, Any]]] = {}
    if need and events.num_rows:
        keep = pc.is_in(events.column("trace_id"), value_set=pa.array(need, pa.string()))
        for r in events.filter(keep).to_pylist():
            rows.setdefault(r["trace_id"], []).append(r)
    for i in todo:
        c = by_id.get(cids[i])
        if c is None or not 0 <= gs[i] < len(c.guarantees):
            continue
        clause = c.guarantees[gs[i]]
        if verdicts[i] == SKIPPED:
            judged = (
                clause if clause.skipped else next((a for a in c.assumptions if a.skipped), None)
            )
            which = judged or clause
            reasons[i] = f"{reasons[i] or 'skipped'}: {which.text}"
            continue
        formula = clause.formula
        prefix = ""
        if reasons[i] == ASSUMPTION_UNKNOWN and c.assumption() is not None:
            formula, prefix = c.assumption(), f"{ASSUMPTION_UNKNOWN}: "
        reasons[i] = prefix + _first_unknown(c, formula, rows.get(tids[i], []))
    # the explained reasons back at their rows, every other row keeping its own
    slot = np.full(raw.num_rows, -1, dtype=np.int64)
    slot[where.to_numpy()] = np.arange(len(tids), dtype=np.int64)
    taken = pa.array([*reasons, None], pa.string()).take(np.where(slot < 0, len(tids), slot))
    return pc.if_else(undecided, taken, raw.column("reason"))
