"""Baselines: write, rescan → nothing new, add a violating trace → exactly its new finding."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.report import baseline
from tests.report.conftest import CONFIG, TRACES, demo, planted, run, write_traces


def test_round_trip(tmp_path: Path) -> None:
    base = tmp_path / "baseline.json"
    res = run("scan", TRACES, "-c", CONFIG, "-q", "--write-baseline", base)
    assert res.exit_code == 0  # writing a baseline accepts today's violations
    doc = json.loads(base.read_text())
    assert doc["schema"] == baseline.SCHEMA
    assert {e["contract_id"] for e in doc["violations"]} == {c for _t, c in planted()}
    assert sum(e["violations"] for e in doc["violations"]) == len(planted())

    res = run("scan", TRACES, "-c", CONFIG, "-f", "json", "--baseline", base)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["violations"] == []
    assert out["summary"]["suppressed"] == len(planted())
    table = run("scan", TRACES, "-c", CONFIG, "--baseline", base)
    assert f"{len(planted())} known violation(s) suppressed" in " ".join(table.stdout.split())

    # the corpus plus a new trace: a refund without a policy check is a known finding
    # (same contract, tool and class), a recursive delete of ~ is a new one (new argument)
    corpus = tmp_path / "corpus"
    shutil.copytree(TRACES, corpus)
    write_traces(
        corpus / "new.jsonl",
        "support-bot",
        {"refund-no-policy-new": demo._refund(False, 1)},
    )
    write_traces(
        corpus / "new-coder.jsonl",
        "coding-agent",
        {"coder-rm-home": demo._coder(demo.READ, ("bash", {"command": "rm -rf ~"}))},
    )
    res = run("scan", corpus, "-c", CONFIG, "-f", "json", "--baseline", base)
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert [(v["trace_id"], v["contract_id"]) for v in out["violations"]] == [
        (demo.trace_id("coder-rm-home"), "coder.no_destructive_shell")
    ]
    assert out["summary"]["suppressed"] == len(planted()) + 1


def test_fingerprint_ignores_trace_and_step_but_not_the_argument() -> None:
    contract = {"patterns": [None], "guarantees": ["G !x"]}
    v = {
        "contract_id": "c",
        "trace_id": "t",
        "tool": "bash",
        "guarantee": 0,
        "evidence": "bash at step 3 violates G !x",
        "matched": "rm -rf /",
    }
    moved = {**v, "evidence": "bash at step 17 violates G !x", "trace_id": "u"}
    assert baseline.fingerprint(v, contract) == baseline.fingerprint(moved, contract)
    assert baseline.evidence_class(v, {"patterns": ["idempotent"]}) == "pattern:idempotent"
    other = {**v, "matched": "rm -rf ~"}
    assert baseline.fingerprint(v, contract) != baseline.fingerprint(other, contract)


def test_matched_argument_is_the_regex_match_normalised() -> None:
    g = 'G(called(bash) -> !arg_field_has(bash, command, "rm\\\\s+-rf\\\\s+\\\\S+"))'
    event = {"tool": "Bash", "args": json.dumps({"command": "cd /x &&  RM   -rf  /tmp/42"}),
             "content": None, "prompt": None}  # fmt: skip
    assert baseline.matched_argument(g, {**event, "args": event["args"].replace("RM", "rm")}) == (
        "rm -rf /tmp/#"
    )
    assert baseline.matched_argument(g, {**event, "tool": "write_file"}) == ""
    pii = 'G !llm_output_contains("\\\\b\\\\d{3}-\\\\d{2}-\\\\d{4}\\\\b")'
    one = baseline.matched_argument(pii, {"tool": None, "args": None, "content": "SSN 078-05-1120",
                                          "prompt": None})  # fmt: skip
    two = baseline.matched_argument(pii, {"tool": None, "args": None, "content": "x 219-09-9999",
                                          "prompt": None})  # fmt: skip
    assert one == two == "#-#-#"


def test_old_baseline_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema": "sponsio-audit/baseline/1", "violations": []}))
    res = run("scan", TRACES, "-c", CONFIG, "--baseline", old)
    assert res.exit_code == 2 and "write it again" in res.stderr


@pytest.mark.parametrize(
    "entry", [7, "f" * 64, {"contract_id": "x"}, {"fingerprint": 12}, {"fingerprint": "zz"}]
)
def test_a_baseline_entry_without_a_fingerprint_is_refused(tmp_path: Path, entry: object) -> None:
    # such an entry was ignored without a word: its violations came back as new
    good = {"fingerprint": "a" * 64}
    doc = {"schema": baseline.SCHEMA, "violations": [good, entry]}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    res = run("scan", TRACES, "-c", CONFIG, "--baseline", path)
    assert res.exit_code == 2, res.output
    assert "violations[1] has no fingerprint" in res.stderr and "Traceback" not in res.stderr


def _matched_by_row(store: object, data: object) -> list[str | None]:
    """The matched argument of each violation row as ``with_matches`` defines it, one event
    read per blamed row (the definition, not the vectorised path)."""
    from sponsio_audit.ingest.store import prompt_sql

    out: list[str | None] = []
    for v in data.violation_table.to_pylist():  # type: ignore[attr-defined]
        if not v["blamed"] or v["seq"] is None:
            out.append(None)
            continue
        rows = store.con.execute(  # type: ignore[attr-defined]
            f"SELECT tool, args, content, {prompt_sql('e')} FROM events e "
            "WHERE trace_id = ? AND seq = ?",
            [v["trace_id"], v["seq"]],
        ).fetchall()
        if not rows:
            out.append(None)
            continue
        tool, args, content, prompt = rows[0]
        text = baseline.guarantee_text(v, data.contract(v["contract_id"]))  # type: ignore[attr-defined]
        event = {"tool": tool, "args": args, "content": content, "prompt": prompt}
        out.append(baseline.matched_argument(text, event))
    return out


def test_with_matches_is_the_match_of_each_blamed_event() -> None:
    """The demo corpus (regex atoms: rm -rf, secrets, PII; and atoms that match no argument):
    each blamed row's ``matched`` is its own event's match, other rows null; a blamed event
    missing from the store gives null, not ""."""
    from sponsio_audit import api
    from sponsio_audit.config import load_config
    from sponsio_audit.report.data import load

    result = api.audit(TRACES, load_config(CONFIG))
    store = result.store
    data = baseline.with_matches(store, load(store, timelines=False))
    got = data.violation_table.column("matched").to_pylist()
    assert got == _matched_by_row(store, data)
    assert any(m for m in got), "the corpus plants regex findings"
    assert "" in got, "and findings of atoms that match no argument"
    gone = data.blamed[0]
    store.con.execute(
        "DELETE FROM events WHERE trace_id = ? AND seq = ?", [gone["trace_id"], gone["seq"]]
    )
    other = next(v for v in data.blamed if v["trace_id"] != gone["trace_id"])
    store.con.execute(  # a trace's last step gone: its other steps stay 0..n-1
        "DELETE FROM events WHERE trace_id = ? AND seq >= ?", [other["trace_id"], other["seq"]]
    )
    again = baseline.with_matches(store, load(store, timelines=False))
    assert again.violation_table.column("matched").to_pylist() == _matched_by_row(store, again)
    assert again.blamed[0]["matched"] is None
    assert next(v for v in again.blamed if v["trace_id"] == other["trace_id"])["matched"] is None


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "é"]),
            st.integers(0, 2),
            st.none() | st.sampled_from(["G(p)", "G(q)", ""]),
        ),
        max_size=30,
    ),
    st.booleans(),
)
def test_distinct_guarantees_are_those_python_finds(rows: list[tuple], dictionary: bool) -> None:
    """The (contract, guarantee, text) triples ``with_matches`` renders once each: every
    distinct row once, in first-seen order, a null text one group of its own; also when the
    text columns are dictionaries split in chunks (as the engine hands them over)."""
    names = ["contract_id", "guarantee", "guarantee_text"]
    half = len(rows) // 2
    parts = []
    for part in (rows[:half], rows[half:]):
        cols = [list(c) for c in zip(*part, strict=True)] if part else [[], [], []]
        arrays = [pa.array(cols[0], pa.string()), pa.array(cols[1], pa.int32())]
        arrays.append(pa.array(cols[2], pa.string()))
        if dictionary:
            arrays[0], arrays[2] = arrays[0].dictionary_encode(), arrays[2].dictionary_encode()
        parts.append(pa.table(arrays, names=names))
    table = pa.concat_tables(parts)
    got = [tuple(r.values()) for r in baseline._distinct(table).to_pylist()]
    assert got == list(dict.fromkeys(rows))


def test_a_violation_on_a_field_not_recorded_has_a_fingerprint(tmp_path: Path) -> None:
    # arg_allowlist is violated by a call without the field: writing the baseline crashed
    # with a TypeError traceback (the missing-field sentinel was turned into JSON)
    from tests.report.conftest import native_trace

    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        'version: "1"\nagents:\n  "*":\n    contracts:\n      - id: only_ls\n'
        "        G: {pattern: arg_allowlist, args: [bash, command, ['^ls']]}\n",
        encoding="utf-8",
    )
    call = {"ts": 1.0, "agent": "bot", "type": "tool_call", "tool": "bash"}
    trace = native_trace(tmp_path / "t.jsonl", [{**call, "args": {"cmd": "rm -rf /"}}])
    base = tmp_path / "baseline.json"
    res = run("scan", trace, "-c", cfg, "-q", "--write-baseline", base)
    assert res.exit_code == 0, res.output
    assert [e["violations"] for e in json.loads(base.read_text())["violations"]] == [1]
    g = "G(called(bash) -> arg_field_has(bash, command, ^ls))"
    for args in ({"cmd": "x"}, {"command": "<redacted>"}, None):
        event = {"tool": "bash", "args": None if args is None else json.dumps(args)}
        assert baseline.matched_argument(g, event) == ""
