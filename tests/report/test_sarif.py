"""SARIF on the demo corpus: valid SARIF 2.1.0, rules GitHub code scanning can show, results
placed on the contract and linked to the trace.

The schema is the OASIS one, shipped in ``tests/report/data`` (see its
README). The security-severity bands are GitHub's documented ones
(critical ≥ 9.0, high 7.0–8.9, medium 4.0–6.9, low 0.1–3.9).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.report.conftest import CONFIG, TRACES, demo, planted, run

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
BANDS = {"high": (7.0, 8.9), "medium": (4.0, 6.9), "low": (0.1, 3.9)}
LEVELS = {"high": "error", "medium": "warning", "low": "note"}


def _contracts() -> dict[str, Any]:
    from sponsio_audit.config import load_config

    return {c.id: c for c in load_config(CONFIG).contracts}


@pytest.fixture(scope="module")
def sarif(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("sarif") / "out.sarif"
    assert run("scan", TRACES, "-c", CONFIG, "-f", "sarif", "-o", out).exit_code == 1
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return doc


def test_valid_against_the_sarif_schema(sarif: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message[:200]}" for e in errors[:5]]
    assert sarif["version"] == "2.1.0"


def test_rules_carry_help_severity_and_tags(sarif: dict[str, Any]) -> None:
    contracts = _contracts()
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == set(contracts)
    for r in rules:
        c = contracts[r["id"]]
        assert r["shortDescription"]["text"] == c.description
        assert r["defaultConfiguration"]["level"] == LEVELS[c.severity]
        low, high = BANDS[c.severity]
        assert low <= float(r["properties"]["security-severity"]) <= high
        assert "security" in r["properties"]["tags"]  # GitHub shows security-severity only so
        help_md, help_text = r["help"]["markdown"], r["help"]["text"]
        assert "how to fix" in help_md and "how to fix" in help_text
        for g in c.guarantees:
            if g.pattern:
                assert f"`{g.pattern}`" in help_md
                assert f"pattern:{g.pattern}" in r["properties"]["tags"]
    by_id = {r["id"]: r for r in rules}
    # must_precede(a, b) is G(c(b) → O c(a)): every b has an earlier a (SEMANTICS.md §6)
    assert "earlier call" in by_id["support.policy_before_refund"]["help"]["markdown"]


def test_results_link_the_trace_span_file_and_record(sarif: dict[str, Any]) -> None:
    run_ = sarif["runs"][0]
    rules = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    results = run_["results"]
    assert {(r["properties"]["trace_id"], r["ruleId"]) for r in results} == planted()
    contracts = _contracts()
    for r in results:
        assert rules[r["ruleIndex"]] == r["ruleId"]
        assert r["level"] == LEVELS[contracts[r["ruleId"]].severity]
        names = [x["fullyQualifiedName"] for x in r["locations"][0]["logicalLocations"]]
        tid, sid = r["properties"]["trace_id"], r["properties"]["span_id"]
        assert names == [f"trace/{tid}", f"trace/{tid}/span/{sid}"]
        assert r["relatedLocations"][0]["logicalLocations"][1]["name"] == sid
        assert r["partialFingerprints"]["primaryLocationLineHash"]
    assert len({r["partialFingerprints"]["primaryLocationLineHash"] for r in results}) == len(
        results
    )  # one alert each: GitHub would merge results sharing a line hash

    def result(name: str) -> dict[str, Any]:
        return next(r for r in results if r["properties"]["trace_id"] == demo.trace_id(name))

    # refund-twice is line k+1 of the support file (one trace per line, in builder order)
    twice = result("refund-twice")["relatedLocations"][0]["physicalLocation"]
    assert twice["artifactLocation"]["uri"].endswith(f"traces/{demo.SUPPORT}")
    assert twice["region"]["startLine"] == list(demo.SUPPORT_TRACES).index("refund-twice") + 1
    # protobuf input: no line region
    rm = result("coder-rm-rf")["relatedLocations"][0]["physicalLocation"]
    assert rm["artifactLocation"]["uri"].endswith(f"traces/{demo.CODING}")
    assert "region" not in rm
    # the blamed call plus every further offending one: calls 6..LOOP_N of run_tests
    assert len(result("coder-loop")["relatedLocations"]) == demo.LOOP_N - 5


def test_primary_location_is_the_contract_line(sarif: dict[str, Any]) -> None:
    """Each result sits on its contract's line in sponsio.yaml, relative to the repository."""
    lines = CONFIG.read_text(encoding="utf-8").splitlines()
    for r in sarif["runs"][0]["results"]:
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {
            "uri": "fixtures/demo/sponsio.yaml",  # the checkout root is the repository's
            "uriBaseId": "%SRCROOT%",
        }
        want = next(i for i, line in enumerate(lines, 1) if line.strip() == f"- id: {r['ruleId']}")
        assert loc["region"]["startLine"] == want
    root = sarif["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert root.startswith("file:///") and root.endswith("/")
