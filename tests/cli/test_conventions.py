"""``sponsio-audit conventions`` lists the one table ingest reads, whole, piped or as JSON."""

from __future__ import annotations

import json

from sponsio_audit.ingest.convention_table import CONVENTIONS
from tests.cli.conftest import cli


def test_piped_listing_has_one_whole_line_per_row() -> None:
    res = cli("conventions", env={"COLUMNS": "40"})
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0].split("\t")[:2] == ["convention", "role"]
    rows = [ln.split("\t") for ln in lines[1:]]
    # the first line says what every span gives, then the table in precedence order
    assert rows[0][0] == "*" and "gen_ai.conversation.id > session.id" in rows[0][3]
    assert [(r[0], r[1]) for r in rows[1:]] == [(c.name, c.role) for c in CONVENTIONS]
    # CONVENTIONS.md's rows, each found whole on its line (`| grep` finds it)
    genai_tool = rows[1]
    assert genai_tool[:3] == ["gen_ai", "tool", "gen_ai.operation.name = execute_tool"]
    assert "args, call_id <- tool_args(gen_ai.tool.call.arguments)" in genai_tool[3]
    oi_tool = next(r for r in rows if r[:2] == ["openinference", "tool"])
    assert "openinference.span.kind = TOOL" in oi_tool[2]
    assert "args, bare <- openinference_input(input.value, tool.parameters)" in oi_tool[3]
    oi_llm = next(r for r in rows if r[:2] == ["openinference", "llm"])
    assert (
        "llm.input_messages.*" in oi_llm[3] and "tokens_in <- llm.token_count.prompt" in oi_llm[3]
    )
    deprecated = next(r for r in rows if r[0] == "gen_ai_deprecated")
    assert "gen_ai.prompt" in deprecated[3] and "gen_ai.completion" in deprecated[3]
    assert {r[0] for r in rows[1:]} == {
        "gen_ai",
        "gen_ai_deprecated",
        "openllmetry",
        "openinference",
        "sponsio",
    }


def test_json_listing() -> None:
    res = cli("conventions", "--format", "json")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert [(d["convention"], d["role"]) for d in doc[1:]] == [
        (c.name, c.role) for c in CONVENTIONS
    ]
    turn = next(d for d in doc if d["role"] == "turn")
    assert turn["convention"] == "sponsio" and turn["agent_scope"] is True
    assert turn["when"] == ["span name = sponsio.agent_turn"]
    genai_llm = next(d for d in doc if (d["convention"], d["role"]) == ("gen_ai", "llm"))
    # token precedence as CONVENTIONS.md states it: the current key first, then the old one
    assert (
        "tokens_in <- gen_ai.usage.input_tokens > gen_ai.usage.prompt_tokens (first present)"
        in genai_llm["fields"]
    )
    assert "tokens_total <- tokens_in + tokens_out when both recorded" in genai_llm["fields"]
