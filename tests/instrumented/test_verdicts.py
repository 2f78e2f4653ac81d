"""The small pack (pack.yaml) on every fixture: every violation the script planted is
found, and no contract passes where the recorded facts cannot decide it.

Expected verdicts are worked out here from the ground truth (what the script
did) and from what the case records (conftest): a fact the instrumentation did
not record makes the contracts that need it *unverifiable*, with a reason that
names the unknown atom, the step and what is missing; never *pass*.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import load_config

from .conftest import CASES, FIX, PACK, STREAM_NO_FINISH, Case, scenarios

BUDGET = 10_000


def _tool_steps(sc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in sc["steps"] if s["kind"] == "tool"]


def _llm_steps(sc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in sc["steps"] if s["kind"] == "llm"]


def _unrecorded_calls(case: Case, sc: dict[str, Any]) -> bool:
    """The case's events hold a tool call with no tool (its spans say a tool was
    called, or cannot say: a streamed span of the official instrumentation)."""
    if case.records != "none":
        return False
    no_finish = sc["stream"] and case.combo in STREAM_NO_FINISH
    return any(s["tool_calls"] or no_finish for s in _llm_steps(sc))


def expected(case: Case, sc: dict[str, Any]) -> dict[str, str]:
    """contract id → verdict, by hand from what the script did and what is recorded."""
    tools, llms = _tool_steps(sc), _llm_steps(sc)
    out: dict[str, str] = {}
    names = [t["name"] for t in tools]
    if _unrecorded_calls(case, sc):
        out["refund.policy_first"] = out["shell.no_rm_rf"] = "unverifiable"
    else:
        first_check = names.index("check_policy") if "check_policy" in names else len(names)
        early = "issue_refund" in names[:first_check]
        out["refund.policy_first"] = "violated" if early else "pass"
        bash = [t for t in tools if t["name"] == "bash"]
        if not bash:
            out["shell.no_rm_rf"] = "pass"
        elif case.records == "all":
            rm = any(re.search(r"\brm\s+-rf\b", t["args"]["command"]) for t in bash)
            out["shell.no_rm_rf"] = "violated" if rm else "pass"
        else:
            out["shell.no_rm_rf"] = "unverifiable"
    if not llms:
        out["output.no_pii"] = out["input.no_injection"] = "pass"
    elif case.records != "all":
        out["output.no_pii"] = out["input.no_injection"] = "unverifiable"
    else:
        ssn = any("123-45-6789" in (s["output"] or "") for s in llms)
        out["output.no_pii"] = "violated" if ssn else "pass"
        texts = [m.get("content") or "" for s in llms for m in s["input"]]
        marker = any("ignore previous instructions" in t.lower() for t in texts)
        out["input.no_injection"] = "violated" if marker else "pass"
    total = sum(s["usage"]["total"] for s in llms)
    out["tokens.budget"] = "violated" if total > BUDGET else "pass"
    return out


MISSING = {
    "refund.policy_first": "did not record which",
    "output.no_pii": "output was not recorded",
    "input.no_injection": "input was not recorded",
}


@pytest.fixture(scope="module")
def pack() -> Any:
    return load_config([PACK])


def _verdicts(case: Case, pack: Any, engine: str = "columnar") -> dict[tuple[str, str], Any]:
    res = audit([FIX / f for f in case.files], pack, engine=engine)
    return {(r["trace_id"], r["contract_id"]): r for r in res.verdicts.to_pylist()}


def test_every_planted_violation_found_and_no_silent_pass(case: Case, pack: Any) -> None:
    got = _verdicts(case, pack)
    scs = scenarios(case.combo)
    assert {t for t, _ in got} == {sc["trace_id"] for sc in scs.values()}  # silent one too
    for name, sc in scs.items():
        for cid, want in expected(case, sc).items():
            v = got[(sc["trace_id"], cid)]
            assert v["verdict"] == want, (name, cid, v["reason"])
            if want == "unverifiable":
                reason = v["reason"] or ""
                assert "unknown at step" in reason, (name, cid, reason)
                if cid == "shell.no_rm_rf":
                    why = "did not record which" if case.records == "none" else "arguments"
                    assert why in reason, reason
                else:
                    assert MISSING.get(cid, "") in reason, reason
            else:
                assert v["reason"] is None


NONE_CASES = [c for c in CASES if c.records == "none"][:2]


@pytest.mark.parametrize("case", NONE_CASES, ids=lambda c: c.id)
def test_the_reference_engine_agrees(case: Case, pack: Any) -> None:
    col, ref = _verdicts(case, pack), _verdicts(case, pack, "reference")
    assert {k: (v["verdict"], v["reason"]) for k, v in col.items()} == {
        k: (v["verdict"], v["reason"]) for k, v in ref.items()
    }


def test_a_skipped_verdict_names_the_clause_that_needs_a_judge(tmp_path: Any) -> None:
    cfg = tmp_path / "judge.yaml"
    cfg.write_text(
        'version: "1"\nagents:\n  "*":\n    contracts:\n'
        "      - id: tone.no_toxicity\n        desc: answers are never toxic\n"
        "        G: {pattern: toxic_free}\n"
    )
    res = audit([FIX / "openinference_openai.traces.pb.gz"], load_config([cfg]))
    rows = res.verdicts.to_pylist()
    assert rows and {r["verdict"] for r in rows} == {"skipped"}
    (reason,) = {r["reason"] for r in rows}
    assert reason.startswith("needs an LLM judge: ") and "toxic_free" in reason
