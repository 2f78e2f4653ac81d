"""A lookaround-regex search that runs out of time makes its atom unknown and is counted
(SEMANTICS.md §5): the contract is unverifiable there, never a pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import load_config

SLOW = r"^(?=(a|a)*b)"  # exponential backtracking on a run of a's without a b
YAML = f"""
version: "1"
regex_timeout_ms: 1
agents:
  "*":
    contracts:
      - id: slow
        G: {{pattern: arg_blacklist, args: [bash, cmd, ['{SLOW}']]}}
      - id: quick
        G: {{pattern: arg_blacklist, args: [bash, cmd, ['(?<!\\S)rm(?!\\S)']]}}
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cfg = tmp_path / "sponsio.yaml"
    cfg.write_text(YAML, encoding="utf-8")
    log = tmp_path / "20260101_000000_1.jsonl"
    lines = [
        {"ts": 1.0, "agent_id": "bot", "action": "bash", "constraint": "x", "result": "allowed",
         "args": {"cmd": "a" * 30 + "!"}},
        {"ts": 2.0, "agent_id": "bot", "action": "bash", "constraint": "x", "result": "allowed",
         "args": {"cmd": "rm -rf /"}},
    ]  # fmt: skip
    log.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return cfg, log


@pytest.mark.parametrize("engine", ["columnar", "reference"])
def test_timeout_is_unknown_and_counted(files: tuple[Path, Path], engine: str) -> None:
    cfg, log = files
    result = audit([log], load_config(cfg), engine=engine)
    got = {r["contract_id"]: r["verdict"] for r in result.verdicts.to_pylist()}
    # the slow regex could not be decided on the first call: unverifiable, not pass
    assert got == {"slow": "unverifiable", "quick": "violated"}
    assert result.summary.regex_timeouts >= 1
    result.store.close()


def test_the_flag_wins_over_the_config(files: tuple[Path, Path]) -> None:
    cfg, log = files
    text = cfg.read_text(encoding="utf-8").replace(
        "regex_timeout_ms: 1", "regex_timeout_ms: 1000000"
    )
    cfg.write_text(text, encoding="utf-8")
    result = audit([log], load_config(cfg), regex_timeout_ms=1.0)
    got = {r["contract_id"]: r["verdict"] for r in result.verdicts.to_pylist()}
    assert got["slow"] == "unverifiable" and result.summary.regex_timeouts >= 1
    result.store.close()


def test_bad_limit_is_a_configuration_error(tmp_path: Path) -> None:
    from sponsio_audit.config import ConfigError

    p = tmp_path / "bad.yaml"
    p.write_text("version: '1'\nregex_timeout_ms: -5\nagents: {}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="regex_timeout_ms"):
        load_config(p)


def test_scan_applies_the_config_files_time_limit(tmp_path: Path) -> None:
    """``regex_timeout_ms`` in sponsio.yaml reaches ``scan``: a search of a few ms (well
    under the 100 ms default) runs out of 1 ms, so the contract is unverifiable. 16 a's take
    about 8 ms on a fast machine (13 took 1.05 ms there, and passed the limit now and then)."""
    from typer.testing import CliRunner

    from sponsio_audit.cli import app

    cfg = tmp_path / "sponsio.yaml"
    cfg.write_text(YAML, encoding="utf-8")
    log = tmp_path / "20260101_000000_1.jsonl"
    line = {"ts": 1.0, "agent_id": "bot", "action": "bash", "constraint": "x",
            "result": "allowed", "args": {"cmd": "a" * 16 + "!"}}  # fmt: skip
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    args = ["scan", str(log), "-c", str(cfg), "-o", str(out), "--fail-on", "none", "-q"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    (undecided,) = json.loads(out.read_text(encoding="utf-8"))["undecided"]
    assert undecided["contract_id"] == "slow"
    assert undecided["reason"].endswith("ran out of time (regex_timeout_ms, --regex-timeout-ms)")


def test_two_audits_at_once_keep_their_own_limit_and_count(tmp_path: Path) -> None:
    """The time limit and the timeout count belong to one audit, not to the process: an
    audit on another thread at the same time, with a limit long enough for the search,
    decides the contract and counts no timeout, while the 1 ms one counts its own."""
    import threading

    quick_cfg = tmp_path / "long.yaml"
    quick_cfg.write_text(
        YAML.replace("regex_timeout_ms: 1", "regex_timeout_ms: 60000"), encoding="utf-8"
    )
    slow_cfg = tmp_path / "short.yaml"
    slow_cfg.write_text(YAML, encoding="utf-8")
    line = {"ts": 1.0, "agent_id": "bot", "action": "bash", "constraint": "x",
            "result": "allowed", "args": {"cmd": ""}}  # fmt: skip
    logs = {}
    for name, run in (("short", "a" * 22 + "!"), ("long", "a" * 12 + "!")):
        logs[name] = tmp_path / name / "20260101_000000_1.jsonl"
        logs[name].parent.mkdir()
        logs[name].write_text(json.dumps({**line, "args": {"cmd": run}}) + "\n", encoding="utf-8")
    start = threading.Barrier(2)
    seen: dict[str, list[tuple[str, int]]] = {"short": [], "long": []}

    def audits(name: str, cfg: Path) -> None:
        start.wait()
        for _ in range(4):
            result = audit([logs[name]], load_config(cfg))
            got = {r["contract_id"]: r["verdict"] for r in result.verdicts.to_pylist()}
            seen[name].append((got["slow"], result.summary.regex_timeouts))
            result.store.close()

    threads = [
        threading.Thread(target=audits, args=("short", slow_cfg)),
        threading.Thread(target=audits, args=("long", quick_cfg)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(v == "unverifiable" and n >= 1 for v, n in seen["short"]), seen
    assert seen["long"] == [("pass", 0)] * 4, seen
