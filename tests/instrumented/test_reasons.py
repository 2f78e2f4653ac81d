"""Each kind of missing fact gives its own sentence in ``verdicts.reason``.

Events are written into a real store (as ingest would), audited with real
contracts; the expected sentences follow the rule of ``sponsio_audit.reasons``:
``<atom> unknown at step <seq>: <what was not recorded> (<how to record it>)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from sponsio_audit.api import audit
from sponsio_audit.config import load_config
from sponsio_audit.event import EVENT_SCHEMA, Event, event_row
from sponsio_audit.ingest import Store


def _store(events: list[Event]) -> Store:
    store = Store.open(None)
    rows = [
        event_row(Event(**{**e.__dict__, "trace_id": "t", "seq": k})) for k, e in enumerate(events)
    ]
    store.insert("events", pa.Table.from_pylist(rows, schema=EVENT_SCHEMA))
    return store


def _reasons(tmp: Path, contracts: str, events: list[Event]) -> dict[str, Any]:
    cfg = tmp / "c.yaml"
    cfg.write_text('version: "1"\nagents:\n  "*":\n    contracts:\n' + contracts)
    res = audit(_store(events), load_config([cfg]))
    return {r["contract_id"]: (r["verdict"], r["reason"]) for r in res.verdicts.to_pylist()}


def test_missing_usage_result_and_an_earlier_unnamed_call(tmp_path: Path) -> None:
    got = _reasons(
        tmp_path,
        "      - id: budget\n        G: {pattern: token_budget, args: [100, total]}\n"
        "      - id: limit\n        G: {pattern: rate_limit, args: [fetch, 3]}\n"
        "      - id: leak\n        G: {ltl: 'G(!output_has(fetch, \"secret\"))'}\n",
        [
            Event("llm_response", tokens_in=5, tokens_out=2, tokens_total=7, convention="gen_ai"),
            Event("llm_response", convention="gen_ai"),  # no usage recorded
            Event("tool_call", tool=None, inferred=True, convention="gen_ai"),  # SEMANTICS §5
            Event("tool_call", tool="fetch", args={}, content=None, convention="openllmetry"),
        ],
    )
    assert got["budget"] == (
        "unverifiable",
        "token_count(total) unknown at step 1: the LLM response at step 1 recorded no token usage",
    )
    capture = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, or export the OTLP logs"
    # count(fetch) is unknown from the unnamed call on (it may have been a fetch)
    assert got["limit"] == (
        "unverifiable",
        "called(fetch) unknown at step 2: a tool was called but the trace did not record which"
        f" (enable content capture: {capture})",
    )
    assert got["leak"][0] == "unverifiable"
    assert got["leak"][1].startswith("output_has(fetch, secret) unknown at step 2: a tool was")


def test_result_not_recorded_names_the_tool_and_the_convention_hint(tmp_path: Path) -> None:
    got = _reasons(
        tmp_path,
        "      - id: leak\n        G: {ltl: 'G(!output_has(fetch, \"secret\"))'}\n",
        [Event("tool_call", tool="fetch", args={"url": "x"}, convention="openllmetry")],
    )
    assert got["leak"] == (
        "unverifiable",
        "output_has(fetch, secret) unknown at step 0: fetch was called but its result was not"
        " recorded (enable content capture: TRACELOOP_TRACE_CONTENT=true)",
    )


def test_an_unknown_assumption_says_so(tmp_path: Path) -> None:
    got = _reasons(
        tmp_path,
        "      - id: gated\n        A: {ltl: 'F arg_has(login, \"admin\")'}\n"
        "        G: {pattern: must_precede, args: [verify, transfer]}\n",
        [
            Event("tool_call", tool="login", args=None, convention="openinference"),
            Event("tool_call", tool="transfer", args={}, convention="openinference"),
        ],
    )
    verdict, reason = got["gated"]
    assert verdict == "unverifiable"
    assert reason.startswith(
        "assumption unknown: arg_has(login, admin) unknown at step 0: login was called but its"
        " arguments were not recorded (the instrumentation hid it"
    )
