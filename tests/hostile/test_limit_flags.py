"""Ingest limits are settable the three ways a user sets them, through the real CLI (issue 13):
``scan --ingest-limit NAME=VALUE``, ``$SPONSIO_AUDIT_INGEST_LIMITS`` and a ``limits:``
mapping in sponsio.yaml (the flag wins over the variable, the variable over the file).

A lowered limit skips exactly the record over it, with ``(limit NAME=VALUE)`` in the
reason, and the rest is read (records read = events' records + skipped); a bad name or
value is a usage error (exit 2) naming the flag, the variable or the YAML path.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sponsio_audit.cli import app
from sponsio_audit.ingest.limits import DEFAULT, ENV, shown

MAX_VALUE = 1 << 53
"""The largest limit value README documents (``8192TiB``)."""

CONTRACTS = """version: "1"
agents:
  "*":
    contracts:
      - id: no_rm
        G:
          pattern: arg_blacklist
          args: [bash, command, ["rm -rf"]]
"""


def _run(msgs: list[dict[str, str]]) -> str:
    return json.dumps({"messages": msgs, "metadata": {"run_id": f"r{len(msgs)}"}})


def _folder(tmp: Path) -> Path:
    """Runs of 2, 5 and 3 messages (one assistant turn each: 2 events per run)."""
    d = tmp / "traces"
    d.mkdir()
    runs = []
    for n in (2, 5, 3):
        msgs = [{"role": "user", "content": f"q{i}"} for i in range(n - 1)]
        runs.append(_run([*msgs, {"role": "assistant", "content": "a"}]))
    (d / "chats.jsonl").write_text("\n".join(runs) + "\n", encoding="utf-8")
    return d


def _scan(tmp: Path, *args: str, env: dict[str, str] | None = None, yaml: str = "") -> Any:
    tmp = Path(tempfile.mkdtemp(dir=tmp))
    cfg = tmp / "sponsio.yaml"
    cfg.write_text(CONTRACTS + yaml, encoding="utf-8")
    out = tmp / "r.json"
    cmd = ["scan", str(_folder(tmp)), "-c", str(cfg), "-f", "json", "-o", str(out)]
    res = CliRunner().invoke(app, [*cmd, "--fail-on", "none", "-q", *args], env=env or {ENV: ""})
    return res, (json.loads(out.read_text("utf-8")) if res.exit_code == 0 else None)


def _skips(doc: Any) -> list[tuple[int, str]]:
    return [(s["record"], s["reason"]) for s in doc["inputs"]["skipped"]]


@pytest.mark.parametrize(
    ("how", "value"),
    [("flag", "4"), ("env", "4"), ("yaml", "4"), ("flag", "4_"), ("yaml", 4)],
)
def test_a_lowered_messages_limit_skips_exactly_that_run(
    tmp_path: Path, how: str, value: Any
) -> None:
    """messages=4: the 5-message run (record 2) is skipped and named; runs 1 and 3 load."""
    if how == "flag":
        res, doc = _scan(tmp_path, "--ingest-limit", f"messages={value}")
    elif how == "env":
        res, doc = _scan(tmp_path, env={ENV: f"messages={value}"})
    else:
        res, doc = _scan(tmp_path, yaml=f"limits:\n  messages: {value}\n")
    assert res.exit_code == 0, res.output
    assert _skips(doc) == [(2, "run of 5 messages (limit messages=4)")]
    assert doc["summary"]["events"] == 4  # two runs x (request, response)
    (f,) = doc["inputs"]["files"]
    assert (f["records"], f["skipped"]) == (3, 1)


def test_the_flag_wins_over_the_variable_and_the_variable_over_the_file(tmp_path: Path) -> None:
    """File messages=1 (would skip every run), variable 2, flag 3: only the 5-message run goes."""
    res, doc = _scan(
        tmp_path,
        "--ingest-limit",
        "messages=3",
        env={ENV: "messages=2"},
        yaml="limits:\n  messages: 1\n",
    )
    assert res.exit_code == 0, res.output
    assert _skips(doc) == [(2, "run of 5 messages (limit messages=3)")]
    res, doc = _scan(tmp_path, env={ENV: "messages=2"}, yaml="limits:\n  messages: 1\n")
    assert [r for _, r in _skips(doc)] == [
        "run of 5 messages (limit messages=2)",
        "run of 3 messages (limit messages=2)",
    ]


def test_a_size_suffix_sets_a_byte_limit(tmp_path: Path) -> None:
    """record_bytes=1KiB: a 2 KB line is skipped as 'limit record_bytes=1024', the others load."""
    d = _folder(tmp_path)
    big = _run([{"role": "user", "content": "x" * 2000}, {"role": "assistant", "content": "a"}])
    with (d / "chats.jsonl").open("a", encoding="utf-8") as f:
        f.write(big + "\n")
    cfg = tmp_path / "sponsio.yaml"
    cfg.write_text(CONTRACTS, encoding="utf-8")
    out = tmp_path / "r.json"
    cmd = ["scan", str(d), "-c", str(cfg), "-f", "json", "-o", str(out), "--fail-on", "none"]
    res = CliRunner().invoke(
        app, [*cmd, "-q", "--ingest-limit", "record_bytes=1KiB"], env={ENV: ""}
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text("utf-8"))
    assert _skips(doc) == [(4, "line too large (limit record_bytes=1024)")]
    assert doc["summary"]["events"] == 6


@pytest.mark.parametrize(
    ("how", "setting", "says"),
    [
        ("flag", "mesages=4", "--ingest-limit: unknown limit 'mesages'; known: file_bytes"),
        ("flag", "messages", "--ingest-limit: 'messages': expected NAME=VALUE"),
        ("flag", "messages=0", "--ingest-limit: messages='0': expected a whole number from 1"),
        ("env", "messages=4,ratio=x", f"{ENV}: ratio='x': expected a whole number from 1"),
        ("yaml", "mesages: 4", "sponsio.yaml:10: limits.mesages: unknown limit 'mesages'"),
        ("yaml", "messages: 1.5", "sponsio.yaml:10: limits.messages: messages=1.5: expected a"),
        ("yaml", "[1]", "sponsio.yaml:9: limits: expected a mapping of limit name to value"),
    ],
)
def test_a_bad_setting_is_a_usage_error_naming_where(
    tmp_path: Path, how: str, setting: str, says: str
) -> None:
    if how == "flag":
        res, _ = _scan(tmp_path, "--ingest-limit", setting)
    elif how == "env":
        res, _ = _scan(tmp_path, env={ENV: setting})
    else:
        body = setting if setting.startswith("[") else f"\n  {setting}"
        res, _ = _scan(tmp_path, yaml=f"limits: {body}\n")
    assert res.exit_code == 2, res.output
    assert says in res.output
    assert "Traceback" not in res.output


def test_the_limits_command_lists_every_limit_with_its_default() -> None:
    """``sponsio-audit limits`` prints one line per ``Limits`` field: name, default, reason."""
    res = CliRunner().invoke(app, ["limits"], env={ENV: ""})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == [n for n, _, _ in DEFAULT.describe()]
    for ln, (_, value, doc) in zip(lines, DEFAULT.describe(), strict=True):
        assert ln.split()[1] == shown(value) and ln.endswith(doc)
    res = CliRunner().invoke(app, ["limits", "-f", "json", "--ingest-limit", "messages=7"])
    got = {r["name"]: (r["value"], r["default"]) for r in json.loads(res.stdout)}
    assert got["messages"] == (7, 20_000) and got["file_bytes"] == (8 << 30, 8 << 30)


def test_the_readme_lists_every_limit_with_its_default() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    for name, value, _ in DEFAULT.describe():
        assert f"| `{name}` | {shown(value)} |" in readme, name


@pytest.mark.parametrize(
    "body",
    ["\n  mesages: 4", "\n  messages: 1.5", "\n  record_bytes: lots", "\n  ratio: 0", " [1]"],
)
def test_validate_rejects_the_limits_scan_rejects_with_the_same_line(
    tmp_path: Path, body: str
) -> None:
    """A bad ``limits:`` block: ``validate`` exits 2 with the very error line ``scan`` prints
    (the YAML path named), never 'loads fine' for a file every scan refuses."""
    res, _ = _scan(tmp_path, yaml=f"limits: {body}\n")
    assert res.exit_code == 2, res.output
    (cfg,) = Path(tmp_path).glob("*/sponsio.yaml")
    scan_errors = [ln for ln in res.stderr.splitlines() if "limits" in ln]
    assert scan_errors and all(f"{cfg}:" in ln for ln in scan_errors)
    got = CliRunner().invoke(app, ["validate", str(cfg)], env={ENV: ""})
    assert got.exit_code == 2, got.output
    assert [ln for ln in got.stderr.splitlines() if "limits" in ln] == scan_errors
    assert "Traceback" not in got.output
    js = CliRunner().invoke(app, ["validate", "-f", "json", str(cfg)], env={ENV: ""})
    assert js.exit_code == 2
    assert [ln.removeprefix("error: ") for ln in scan_errors] == [
        e for e in json.loads(js.stdout)["errors"] if "limits" in e
    ]


@pytest.mark.parametrize("how", ["flag", "env", "yaml"])
def test_a_value_past_the_largest_limit_is_a_usage_error(tmp_path: Path, how: str) -> None:
    """record_bytes=8388608TiB (2**63 bytes) made every record a skipped 'OverflowError';
    past ``MAX_VALUE`` it is refused before any file is read: exit 2, one line naming where."""
    value = "8388608TiB"
    if how == "flag":
        res, _ = _scan(tmp_path, "--ingest-limit", f"record_bytes={value}")
        where = "--ingest-limit: "
    elif how == "env":
        res, _ = _scan(tmp_path, env={ENV: f"record_bytes={value}"})
        where = f"{ENV}: "
    else:
        res, _ = _scan(tmp_path, yaml=f"limits:\n  record_bytes: {value}\n")
        where = "sponsio.yaml:10: limits.record_bytes: "
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.splitlines()
    assert where in line and f"record_bytes='{value}': expected a whole number from 1" in line
    assert "Traceback" not in res.output and "Overflow" not in res.output


@pytest.mark.parametrize("how", ["flag", "yaml"])
def test_every_limit_at_its_largest_value_reads_everything(tmp_path: Path, how: str) -> None:
    """Each limit set to ``MAX_VALUE`` (8192TiB, or 2**53 as a YAML int) is usable: the scan
    reads every record as with the defaults, none skipped."""
    if how == "flag":
        flags = [f"--ingest-limit={n}={shown(MAX_VALUE)}" for n, _, _ in DEFAULT.describe()]
        res, doc = _scan(tmp_path, *flags)
    else:
        body = "".join(f"\n  {n}: {MAX_VALUE}" for n, _, _ in DEFAULT.describe())
        res, doc = _scan(tmp_path, yaml=f"limits:{body}\n")
    assert res.exit_code == 0, res.output
    assert _skips(doc) == [] and doc["summary"]["events"] == 6
    assert (
        CliRunner().invoke(app, ["limits", f"--ingest-limit=ratio={MAX_VALUE + 1}"]).exit_code == 2
    )
