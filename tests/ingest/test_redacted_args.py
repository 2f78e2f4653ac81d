"""Arguments an exporter redacted are not recorded (SEMANTICS.md §2), end to end.

The guard's exporter (and Sponsio's) writes ``<redacted>`` for a secret-looking
value: a bash command holding a token became ``{"command": "<redacted>"}`` and
passed a blacklist on ``rm -rf``. Spans are made by the real OpenTelemetry SDK.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import make_otel, no_rm

CONTRACTS = no_rm(
    "command",
    more="      - id: no_rm_anywhere\n        G: {ltl: '!arg_has(bash, \"rm\\\\s+-rf\")'}\n",
)


def _verdicts(tmp_path: Path, args: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    from sponsio_audit.api import audit
    from sponsio_audit.config import load_config

    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
             "gen_ai.tool.call.arguments": json.dumps(args)}  # fmt: skip
    tree = {"name": "execute_tool bash", "start": 0, "end": 4, "attrs": attrs}
    make_otel.write_all(tmp_path / "t", [make_otel.spans_request([tree], "svc")])
    cfg = tmp_path / "contracts.yaml"
    cfg.write_text(CONTRACTS, encoding="utf-8")
    result = audit([tmp_path / "t.jsonl"], load_config(cfg))
    try:
        rows = result.verdicts.to_pylist()
        return {r["contract_id"]: (str(r["verdict"]), r["reason"]) for r in rows}
    finally:
        result.store.close()


def test_a_redacted_command_is_unverifiable_with_its_reason(tmp_path: Path) -> None:
    got = _verdicts(tmp_path, {"command": "<redacted>"})
    assert {c: v for c, (v, _) in got.items()} == {
        "no_rm": "unverifiable",
        "no_rm_anywhere": "unverifiable",
    }
    for _, reason in got.values():
        assert reason is not None and "hide command as <redacted>" in reason, reason


@pytest.mark.parametrize(
    ("args", "want"),
    [
        ({"command": "rm -rf /", "api_key": "<redacted>"}, "violated"),  # proven by the rest
        ({"command": "ls", "api_key": "<redacted>"}, None),
    ],
)
def test_what_the_recorded_rest_proves_stands(
    tmp_path: Path, args: dict[str, str], want: str | None
) -> None:
    got = _verdicts(tmp_path, args)
    assert got["no_rm"][0] == (want or "pass")  # the field read is wholly recorded
    # over the whole args text, a miss may be the hidden key's doing
    assert got["no_rm_anywhere"][0] == (want or "unverifiable")
