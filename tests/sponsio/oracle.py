"""Sponsio 0.2.0a21 as the oracle: our events and contracts → its trace objects and verdicts.

Importing this module imports Sponsio: when it is missing the importing test
module is skipped with a reason, except under ``CI=true``, where a missing
oracle is an error (a differential suite that silently does not run proves
nothing).

Both sides are reduced to one *outcome* per (trace, contract):
``assumption`` (a global-mode assumption is false: Sponsio reports the
assumption failed and checks no guarantee; we report an ``assumption``
violation), ``not_applicable`` (a first_match assumption never activates),
``violated`` (some guarantee is false), ``unverifiable`` (ours only: a fact
the contract needs was not recorded) or ``pass``.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pytest

VERSION = "0.2.0a21"
try:
    import sponsio
    from sponsio.formulas import formula as S
    from sponsio.generation.dsl_to_contract import get_available_patterns
    from sponsio.models.agent import Agent as SAgent
    from sponsio.models.contract import Contract as SContract
    from sponsio.models.trace import Event as SEvent
    from sponsio.models.trace import Trace as STrace
    from sponsio.runtime.verifier import TraceVerifier
except ImportError as e:  # pragma: no cover - depends on the environment
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI=true and the oracle sponsio=={VERSION} is missing: {e}") from e
    pytest.skip(
        f"sponsio=={VERSION} is not installed (pip install -e '.[test]'): {e}",
        allow_module_level=True,
    )

if getattr(sponsio, "__version__", VERSION) != VERSION:  # pragma: no cover
    pytest.fail(f"the oracle must be sponsio=={VERSION}, found {sponsio.__version__}")

from sponsio_audit.engine import columnar_raw, reference_raw  # noqa: E402
from sponsio_audit.event import EVENT_SCHEMA, Event  # noqa: E402
from sponsio_audit.ltl import ast  # noqa: E402
from sponsio_audit.ltl.contract import Contract  # noqa: E402

PAIRS: Counter[str] = Counter()
"""(trace, contract) pairs compared with Sponsio, by family; printed at the end of the run."""

AGENT = "bot"


# ------------------------------------------------------------------ traces


def sponsio_trace(events: Sequence[Event]) -> Any:
    """Sponsio's ``Trace`` of one of our traces (positions = our event order)."""
    out = []
    for i, e in enumerate(events):
        match e.type:
            case "tool_call":
                out.append(SEvent(i, e.agent or AGENT, "tool_call", tool=e.tool, args=e.args,
                                  content=e.content))  # fmt: skip
            case "llm_response":
                args = {"tokens": e.tokens_total} if e.tokens_total is not None else None
                out.append(SEvent(i, e.agent or AGENT, "llm_response", args=args,
                                  content=e.content))  # fmt: skip
            case "llm_request":
                out.append(SEvent(i, e.agent or AGENT, "llm_request", content=e.prompt))
            case "context_update":
                out.append(SEvent(i, e.agent or AGENT, "context_update", args=e.args))
            case "message":
                out.append(SEvent(i, e.agent or AGENT, "message", to=e.target, content=e.content))
            case "evidence":
                out.append(SEvent(i, e.agent or AGENT, "evidence", key=e.tool, args=e.args))
            case "data_write":
                keys = list(e.args or {})
                out.append(SEvent(i, e.agent or AGENT, "data_write", key=f"k{i}", contains=keys))
            case other:
                raise ValueError(f"no Sponsio event for {other}")
    return STrace(events=out)


def events_table(traces: Sequence[Sequence[Event]]) -> pa.Table:
    """Our events table (store schema) holding ``traces`` as t0, t1, …"""
    import json

    rows = []
    for t, events in enumerate(traces):
        for seq, e in enumerate(events):
            row: dict[str, Any] = {f.name: None for f in EVENT_SCHEMA}
            row.update(trace_id=f"t{t}", seq=seq, type=e.type, agent=e.agent or AGENT)
            row.update(span_id=f"s{t}.{seq}", file_id=1, record=seq, inferred=False)
            row.update(tool=e.tool, content=e.content, prompt=e.prompt)
            row.update(tokens_total=e.tokens_total, tokens_in=e.tokens_in, tokens_out=e.tokens_out)
            row.update(target=e.target, duration_ns=e.duration_ns, start_ns=seq)
            row.update(args=None if e.args is None else json.dumps(e.args, separators=(",", ":")))
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)


# ------------------------------------------------------------------ formulas


def to_sponsio(f: Any) -> Any:
    """Sponsio's AST of one of our formulas (the fragment both languages have)."""
    match f:
        case ast.Atom(name, args):
            return S.Atom(name, *map(str, args))
        case ast.Cmp(op, left, right):
            cls = {"<=": S.Le, "<": S.Lt, ">=": S.Ge, ">": S.Gt, "==": S.Eq}[op]
            return cls(_term(left), _term(right))
        case ast.Not(a):
            return S.Not(to_sponsio(a))
        case ast.And(a, b):
            return S.And(to_sponsio(a), to_sponsio(b))
        case ast.Or(a, b):
            return S.Or(to_sponsio(a), to_sponsio(b))
        case ast.Implies(a, b):
            return S.Implies(to_sponsio(a), to_sponsio(b))
        case ast.Always(a):
            return S.G(to_sponsio(a))
        case ast.Eventually(a):
            return S.F(to_sponsio(a))
        case ast.Next(a):
            return S.X(to_sponsio(a))
        case ast.Until(a, b):
            return S.U(to_sponsio(a), to_sponsio(b))
    raise TypeError(f"no Sponsio counterpart for {f!r}")


def _term(t: Any) -> Any:
    match t:
        case ast.Num(v):
            return S.Const(v)
        case ast.Str(v):
            return S.Const(v)
        case ast.Atom("arg_length", (tool, field)):
            return S.ArgLength(str(tool), str(field))
        case ast.Atom("arg_value", (tool, field)):
            return S.ArgValue(str(tool), str(field))
        case ast.Atom("ctx_value", (key,)):
            return S.CtxValue(str(key))
        case ast.Atom(name, args):
            return S.Var(name, *map(str, args))
    raise TypeError(f"no Sponsio term for {t!r}")


def sponsio_pattern(name: str, args: Sequence[Any]) -> Any:
    """Sponsio's DetFormula of pattern ``name`` called with positional ``args``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return get_available_patterns()[name](*args)


# ------------------------------------------------------------------ verdicts

SpecFactory = Callable[[Any], Any]
"""Builds a Sponsio contract for an ``Agent``."""


def sponsio_contract(
    agent: Any,
    guarantees: Sequence[Any],
    assumptions: Sequence[Any] = (),
    first_match: bool = False,
) -> Any:
    """A Sponsio ``Contract`` (guarantees and assumptions as Sponsio formulas or DetFormulas)."""
    return SContract(
        agent=agent,
        guarantee=list(guarantees),
        assumption=list(assumptions) or None,
        activate_at="first_match" if first_match else None,
    )


def sponsio_outcome(contract: Any, trace: Any, agents: dict[str, Any]) -> str:
    """The outcome Sponsio's ``TraceVerifier.check_contract`` gives (liveness included)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = TraceVerifier(agents=agents)
        v.sync_from_contracts(trace, [contract])
        cv = v.check_contract(contract, include_liveness=True)
    if not cv.assumption_holds:
        return "not_applicable" if contract.activate_at == "first_match" else "assumption"
    return "violated" if cv.guarantee_violations else "pass"


def sponsio_agent(permissions: Sequence[str] = ()) -> Any:
    """Sponsio's ``Agent`` for our single agent."""
    return SAgent(id=AGENT, permissions=list(permissions))


def _reduce(rows: list[dict[str, Any]]) -> str:
    vs = [(r["verdict"], r["kind"]) for r in rows]
    if any(v == "violated" and k == "assumption" for v, k in vs):
        return "assumption"
    if all(v == "not_applicable" for v, _ in vs):
        return "not_applicable"
    if any(v == "violated" for v, _ in vs):
        return "violated"
    if any(v == "unverifiable" for v, _ in vs):
        return "unverifiable"
    if any(v == "skipped" for v, _ in vs):
        return "skipped"
    return "pass"


def our_outcomes(
    traces: Sequence[Sequence[Event]], contracts: Sequence[Contract], perms: frozenset[str]
) -> dict[tuple[int, str], str]:
    """Our outcome for every (trace number, contract id), by both engines.

    The reference engine (online grounding + ``judge``) and the columnar engine
    must agree with each other; the pair's outcome is theirs.
    """
    table = events_table(traces)
    p = {AGENT: perms}
    out: dict[tuple[int, str], str] = {}
    for raw in (reference_raw(table, contracts, p), columnar_raw(table, contracts, p)):
        rows: dict[tuple[int, str], list[dict[str, Any]]] = {}
        for r in raw.to_pylist():
            rows.setdefault((int(r["trace_id"][1:]), r["contract_id"]), []).append(r)
        got = {k: _reduce(v) for k, v in rows.items()}
        if out:
            assert got == out, "the two engines disagree"
        out = got
    return out
