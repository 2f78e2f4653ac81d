"""A token count recorded as a bool or a negative number is no count (SEMANTICS.md §5).

``true`` is not 1 token, and a negative count would lower a run's total: were
either read as a number, a ``token_budget`` over the run could pass. The usage
is missing instead, so the budget is *unverifiable* there, in a native trace as
under the OTel conventions (spans made by the real SDK, ``fixtures/make_otel.py``),
while a recorded integer still decides it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import judged, make_otel

CONTRACTS = """
version: "1"
agents:
  "*":
    contracts:
      - id: budget
        G: {pattern: token_budget, args: [100]}
"""


def _verdict(tmp_path: Path, path: Path) -> str:
    verdicts, _ = judged(path, CONTRACTS, tmp_path)
    return verdicts["budget"]


def _native(tmp_path: Path, tokens: Any) -> Path:
    ev = {"ts": 1714550401, "agent": "bot", "type": "llm_response", "content": "ok",
          "tokens_in": tokens, "tokens_out": tokens, "tokens_total": tokens}  # fmt: skip
    path = tmp_path / "t.shield-trace.jsonl"
    path.write_text(json.dumps(ev) + "\n", encoding="utf-8")
    return path


def _otel(tmp_path: Path, tokens: Any) -> Path:
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": "[]",
             "gen_ai.usage.input_tokens": tokens, "gen_ai.usage.output_tokens": tokens}  # fmt: skip
    make_otel.write_all(
        tmp_path / "t", [make_otel.spans_request([{"name": "chat m", "start": 0, "end": 4,
                                                   "attrs": attrs}], "svc")]
    )  # fmt: skip
    return tmp_path / "t.jsonl"


def _transcript(tmp_path: Path, tokens: Any) -> Path:
    usage = {"prompt_tokens": tokens, "completion_tokens": tokens, "total_tokens": tokens}
    msgs = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok", "usage": usage},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(msgs), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "write", [_native, _otel, _transcript], ids=["native", "otel", "transcript"]
)
def test_a_bool_or_negative_token_count_makes_the_budget_unverifiable(
    tmp_path: Path, write: Any
) -> None:
    assert _verdict(tmp_path, write(tmp_path, True)) == "unverifiable"
    assert _verdict(tmp_path, write(tmp_path, -5000)) == "unverifiable"
    assert _verdict(tmp_path, write(tmp_path, 30)) == "pass"  # a total of 30 (or 30 + 30)
    assert _verdict(tmp_path, write(tmp_path, 120)) == "violated"
