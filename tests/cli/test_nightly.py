"""The README's nightly job, run as written, on two nights of different traces.

Night 1 writes the baseline (the README's "create the baseline once"
command). Night 2 holds new traces (new ids, other order numbers, another
SSN, the same rm -rf /) and one new finding (rm -rf ~): the job fails on
that one only. Night 3 holds only known findings in new traces: it passes.
The traces are made with the real OpenTelemetry SDK (``fixtures/make_demo.py``).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.cli.conftest import CONFIG, REPO, cli, demo, write_traces

README = (REPO / "README.md").read_text(encoding="utf-8")


def _job_commands() -> list[str]:
    """The ``sponsio-audit`` commands of the README's nightly job, in order."""
    section = README[README.index("## Nightly job") :]
    block = section[section.index("```yaml") + len("```yaml") : section.index("```\n", 10)]
    steps = yaml.safe_load(block)["jobs"]["audit"]["steps"]
    return [s["run"].strip() for s in steps if "sponsio-audit" in str(s.get("run", ""))]


def _baseline_command() -> str:
    m = re.search(r"Create the baseline once with `([^`]+)`", README)
    assert m is not None, "the README says how to create the baseline"
    return " ".join(m.group(1).split())


def _run(command: str, cwd: Path) -> Any:
    """Run one README command line in ``cwd`` (``>> FILE`` appends stdout to FILE)."""
    words = shlex.split(command)
    target = None
    if ">>" in words:
        i = words.index(">>")
        words, target = words[:i], words[i + 1]
    assert words[0] == "sponsio-audit"
    res = cli(*words[1:], cwd=cwd)
    if target is not None:
        with (cwd / target.replace("$GITHUB_STEP_SUMMARY", "summary.md")).open("a") as f:
            f.write(res.stdout)
    return res


def _night(repo: Path, tag: str, builders: dict[str, tuple[str, Callable[..., Any]]]) -> None:
    traces = repo / "traces"
    shutil.rmtree(traces, ignore_errors=True)
    traces.mkdir()
    by_service: dict[str, dict[str, Callable[..., Any]]] = {}
    for name, (service, build) in builders.items():
        by_service.setdefault(service, {})[f"{name}-{tag}"] = build
    for service, group in by_service.items():
        write_traces(traces / f"{service}.otlp.jsonl", service, group)


def _known(ssn: str) -> dict[str, tuple[str, Callable[..., Any]]]:
    return {
        "refund-no-policy": ("support-bot", demo._refund(False, 1)),
        "refund-twice": ("support-bot", demo._refund(True, 2)),
        "refund-ok": ("support-bot", demo._refund(True, 1)),
        "coder-rm-rf": ("coding-agent", demo.CODING_TRACES["coder-rm-rf"]),
        "coder-ok": ("coding-agent", demo.CODING_TRACES["coder-ok"]),
        "wf-pii": ("research-workflow", demo._workflow(output=f"Reach the author, SSN {ssn}.")),
        "wf-ok": ("research-workflow", demo._workflow()),
    }


def test_readme_nightly_job_on_new_traces_every_night(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)  # the repository root that discovery stops at
    shutil.copy(CONFIG, repo / "sponsio.yaml")
    scan, *reports = _job_commands()
    assert "--baseline" in scan and "audit.sarif" in scan

    _night(repo, "n1", _known(demo.SSN))
    res = _run(_baseline_command(), repo)
    assert res.exit_code == 0, res.output
    assert (repo / ".sponsio" / "baseline.json").is_file()

    new = {
        **_known("219-09-9999"),
        "coder-rm-home": (
            "coding-agent",
            demo._coder(demo.READ, ("bash", {"command": "rm -rf ~"})),
        ),
    }
    _night(repo, "n2", new)
    res = _run(scan, repo)
    assert res.exit_code == 1, res.output
    assert "known suppressed" in res.stderr
    results = json.loads((repo / "audit.sarif").read_text())["runs"][0]["results"]
    assert len(results) == 1
    assert results[0]["ruleId"].startswith("coder.no_destructive_shell")
    for command in reports:
        res = _run(command, repo)
        assert res.exit_code == 0, res.output
    summary = (repo / "summary.md").read_text()
    assert demo.trace_id("coder-rm-home-n2") in summary  # the new finding, and it alone
    assert demo.trace_id("coder-rm-rf-n2") not in summary
    assert (repo / "audit.html").read_text().lstrip().lower().startswith("<!doctype html")

    _night(repo, "n3", _known("457-55-5462"))
    res = _run(scan, repo)
    assert res.exit_code == 0, res.output
    assert json.loads((repo / "audit.sarif").read_text())["runs"][0]["results"] == []
