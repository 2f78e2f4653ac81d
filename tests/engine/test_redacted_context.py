"""A context value the exporter redacted is not recorded (SEMANTICS.md §2), end to end:
"deploy only in staging" over a trace whose context_update hid ``env`` as ``<redacted>``
is unverifiable, with the reason, never violated or clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import load_config

CONTRACTS = """version: "1"
agents:
  "*":
    contracts:
      - id: staging_only
        G: {pattern: ctx_required, args: [deploy, env, staging]}
      - id: never_prod
        G: {ltl: 'G(called(deploy) -> !ctx(env, prod))'}
"""


def _verdicts(tmp_path: Path, env: object) -> dict[str, tuple[str, str | None]]:
    lines = [
        {"start_ns": 1, "agent": "ops", "type": "context_update", "args": {"env": env}},
        {"start_ns": 2, "agent": "ops", "type": "tool_call", "tool": "deploy", "args": {}},
    ]
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    cfg = tmp_path / "sponsio.yaml"
    cfg.write_text(CONTRACTS, encoding="utf-8")
    result = audit([trace], load_config(cfg))
    try:
        rows = result.verdicts.to_pylist()
        return {r["contract_id"]: (str(r["verdict"]), r["reason"]) for r in rows}
    finally:
        result.store.close()


@pytest.mark.parametrize(
    ("env", "verdict"),
    [("staging", "pass"), ("prod", "violated"), ("<redacted>", "unverifiable")],
)
def test_a_redacted_context_value_leaves_the_contracts_unverifiable(
    tmp_path: Path, env: str, verdict: str
) -> None:
    """Both ways: a required value (was violated) and a forbidden one (was a wrong pass)."""
    got = _verdicts(tmp_path, env)
    assert {c: v for c, (v, _) in got.items()} == {"staging_only": verdict, "never_prod": verdict}
    if verdict == "unverifiable":
        for _, reason in got.values():
            assert reason is not None
            assert "context_update at step 0 hides env as <redacted>" in reason
