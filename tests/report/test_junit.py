"""JUnit on the demo corpus: one testcase per (contract, trace), red exactly when the exit code is.

Severities come from ``fixtures/demo/sponsio.yaml`` (read with the config
loader), the planted violations and their files from ``make_demo``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sponsio_audit.ingest import Store
from sponsio_audit.report import junit
from sponsio_audit.report.data import load
from sponsio_audit.report.options import RenderOptions
from tests.report.conftest import CONFIG, TRACES, demo, planted, run

RANK = {"high": 0, "medium": 1, "low": 2}


def _severity() -> dict[str, str]:
    from sponsio_audit.config import load_config

    return {c.id: c.severity for c in load_config(CONFIG).contracts}


def _file_of(trace_id: str) -> str:
    for names, file in (
        (demo.SUPPORT_TRACES, demo.SUPPORT),
        (demo.CODING_TRACES, demo.CODING),
        (demo.WORKFLOW_TRACES, demo.WORKFLOW),
    ):
        if trace_id in {demo.trace_id(n) for n in names}:
            return str(file)
    raise KeyError(trace_id)


def _render(db: Path, fail_on: str) -> ET.Element:
    store = Store.open(db)
    try:
        data = load(store, timelines=False, verdict_rows=True)
    finally:
        store.close()
    return ET.fromstring(junit.render(data, RenderOptions(fail_on=fail_on)))


def _cases(root: ET.Element) -> list[ET.Element]:
    return [case for s in root.findall("testsuite") for case in s.findall("testcase")]


def _prop(case: ET.Element, name: str) -> list[str]:
    return [p.get("value", "") for p in case.iter("property") if p.get("name") == name]


@pytest.mark.parametrize("fail_on", ["high", "medium", "low", "none"])
def test_failures_agree_with_fail_on(demo_db: Path, fail_on: str) -> None:
    root = _render(demo_db, fail_on)
    sev = _severity()
    limit = RANK.get(fail_on, -1)
    failing = {(t, c) for t, c in planted() if RANK[sev[c]] <= limit}
    failed = {
        (_prop(case, "trace_id")[0], case.get("classname"))
        for case in _cases(root)
        if case.find("failure") is not None
    }
    assert failed == failing
    assert int(root.get("failures", "-1")) == len(failing)
    recorded = {
        (_prop(case, "trace_id")[0], case.get("classname"))
        for case in _cases(root)
        if _prop(case, "violation")
    }
    assert recorded == planted()  # below --fail-on: still recorded, just not red
    for case in _cases(root):
        key = (_prop(case, "trace_id")[0], case.get("classname"))
        if key in planted() - failing:
            out = case.find("system-out")
            assert out is not None and "not failing" in (out.text or "")


def test_cases_name_trace_and_file_and_carry_severity(demo_db: Path) -> None:
    from sponsio_audit.config import load_config

    root = _render(demo_db, "high")
    sev = _severity()
    assert {s.get("name") for s in root.findall("testsuite")} == {
        c.id for c in load_config(CONFIG).contracts
    }
    for s in root.findall("testsuite"):
        assert int(s.get("tests", "-1")) == len(s.findall("testcase"))
    for case in _cases(root):
        tid = _prop(case, "trace_id")[0]
        assert _prop(case, "severity") == [sev[str(case.get("classname"))]]
        name = case.get("name", "")
        assert name.startswith(tid)
        if (tid, case.get("classname")) in planted():
            assert name == f"{tid} ({case.get('file')})"
            assert str(case.get("file")).endswith(f"traces/{_file_of(tid)}")


def test_cli_exit_code_and_junit_agree(tmp_path: Path) -> None:
    """`scan -f junit` (default --fail-on high): exit 1, and the failures are the high ones."""
    out = tmp_path / "junit.xml"
    assert run("scan", TRACES, "-c", CONFIG, "-f", "junit", "-o", out).exit_code == 1
    root = ET.parse(out).getroot()
    sev = _severity()
    high = {(t, c) for t, c in planted() if sev[c] == "high"}
    failed = {
        (_prop(case, "trace_id")[0], case.get("classname"))
        for case in _cases(root)
        if case.find("failure") is not None
    }
    assert failed == high
