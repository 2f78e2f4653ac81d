"""Unverifiable and skipped verdicts are explained in every format, with their reasons.

Corpus (hand-made): one native trace whose ``bash`` call records no
arguments, audited by an ``arg_blacklist`` over ``bash``'s ``command``
(the field is missing: unknown, so *unverifiable*, never pass: SEMANTICS
§2) and by ``jailbreak_free`` (an LLM-judge constraint: *skipped*).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from markdown_it import MarkdownIt

from tests.report.conftest import SKIPPED, UNVERIFIABLE, run, undecided_corpus

SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
HOSTILE_TOOL = "<b>bash</b>"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("undecided")
    trace, cfg = undecided_corpus(tmp)
    db = tmp / "a.duckdb"
    res = run("scan", trace, "-c", cfg, "--db", db, "-q")
    assert res.exit_code == 0, res.output
    return trace, cfg, db


def _report(db: Path, fmt: str, tmp_path: Path) -> str:
    out = tmp_path / f"r.{fmt}"
    res = run("report", "--db", db, "-f", fmt, "-o", out)
    assert res.exit_code == 0, res.output
    return out.read_text(encoding="utf-8")


def _trace_id(db: Path) -> str:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT DISTINCT trace_id FROM events").fetchall()
    finally:
        con.close()
    assert len(row) == 1
    return str(row[0][0])


def test_json_lists_each_with_its_reason(corpus: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, _, db = corpus
    doc = json.loads(_report(db, "json", tmp_path))
    schema = json.loads(files("sponsio_audit.report").joinpath("report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    tid = _trace_id(db)
    got = {(u["trace_id"], u["contract_id"], u["verdict"]) for u in doc["undecided"]}
    assert got == {(tid, UNVERIFIABLE, "unverifiable"), (tid, SKIPPED, "skipped")}
    skipped = next(u for u in doc["undecided"] if u["verdict"] == "skipped")
    assert "judge" in (skipped["reason"] or "")  # the clause needs an LLM judge
    assert doc["summary"]["verdicts"]["pass"] == 0  # undecidable never passes


def test_every_other_format_names_them(corpus: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, _, db = corpus
    tid = _trace_id(db)
    page = _report(db, "html", tmp_path)
    section = page[page.index('id="undecided"') :]
    for cid in (UNVERIFIABLE, SKIPPED):
        assert re.search(
            rf"<td class=\"mono\">{re.escape(cid)}</td><td class=\"mono\">{tid}", section
        )
    assert "needs an LLM judge" in section
    md = MarkdownIt("commonmark").enable("table").render(_report(db, "markdown", tmp_path))
    blocks = dict(re.findall(r"<details>\s*<summary>(\S+) .*?</summary>(.*?)</details>", md, re.S))
    assert set(blocks) == {UNVERIFIABLE, SKIPPED}
    assert "unverifiable" in blocks[UNVERIFIABLE] and tid in blocks[UNVERIFIABLE]
    assert "needs an LLM judge" in blocks[SKIPPED]
    root = ET.fromstring(_report(db, "junit", tmp_path))
    skips = {
        case.get("classname"): case.find("skipped")
        for case in root.iter("testcase")
        if case.find("skipped") is not None
    }
    assert set(skips) == {UNVERIFIABLE, SKIPPED}
    assert "needs an LLM judge" in (skips[SKIPPED].get("message") or "")  # type: ignore[union-attr]
    assert int(root.get("skipped", "-1")) == 2 and int(root.get("failures", "-1")) == 0
    sarif: dict[str, Any] = json.loads(_report(db, "sarif", tmp_path))
    validator = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    assert not list(validator.iter_errors(sarif))
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    by_rule = {n["associatedRule"]["id"]: n for n in notes if "associatedRule" in n}
    assert set(by_rule) == {UNVERIFIABLE, SKIPPED}
    assert by_rule[UNVERIFIABLE]["properties"]["trace_ids"] == [tid]
    assert sarif["runs"][0]["results"] == []  # not alerts
    table = _report(db, "table", tmp_path)
    assert "Unverifiable and skipped" in table and UNVERIFIABLE in table
