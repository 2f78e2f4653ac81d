"""Transcripts stored once (issue 13): every reader gets today's rendered input, every verdict
is today's.

Before shared prompts each LLM request of a transcript stored its whole rendered
history (``messages.prompt_and_system`` of the messages before it). Now a request
whose input starts the next one's keeps only ``prompt_from``/``prompt_chars``. The
oracle here is that old rendering, computed from the messages by
``messages.prompt_and_system``; the system under test is the real ingest into a
real DuckDB store, then the SQL readers (``prompt_sql``), the reference reader
(``resolve_prompts``), the columnar grounding and ``evaluate`` with both engines.
Regexes are chosen to match across message boundaries and at the end of a
prefix (``$``, ``\\b``, lookahead), where a prefix and the longer text differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsio_audit.atoms.columnar import ground_columns
from sponsio_audit.atoms.online import ground_events
from sponsio_audit.evaluation import ContractSet, evaluate
from sponsio_audit.event import Event, event_from_row, resolve_prompts
from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ingest import messages as m
from sponsio_audit.ingest.store import prompt_sql
from sponsio_audit.ltl.ast import Always, Atom, Cmp, Not, Num
from sponsio_audit.ltl.contract import Clause, Contract

REGEXES = (
    "a\nuser",
    "^system",
    "a$",
    "(?s)a.*b",
    "(?m)^user: b$",
    "b\\b",
    ":\\s*$",
    "é(?=👍)",
    "b(?!\n)",
    "👍",
    "^$",
    "\n\n",
    "tool_call bash",
)
TEXT = st.text(alphabet="ab: \né👍", max_size=6)
CALL = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["c1", "c2"]),
        "function": st.fixed_dictionaries(
            {"name": st.sampled_from(["bash", "x"]), "arguments": st.just('{"c":"a"}')}
        ),
    }
)
MESSAGE = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "developer", "user", "tool", ""]), "content": TEXT}
    ),
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": TEXT},
        optional={"tool_calls": st.lists(CALL, max_size=2)},
    ),
    st.fixed_dictionaries(
        {"role": st.just("tool"), "tool_call_id": st.just("c1"), "content": TEXT}
    ),
)
RUN = st.tuples(st.lists(MESSAGE, max_size=12), st.sampled_from([None, "bot", "helper"]))


def _old(msgs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(prompt, system prompt) of every assistant message, rendered as before sharing."""
    norm = [m.to_msg(x) or m.Msg("", (), ()) for x in msgs]
    return [m.prompt_and_system(norm[:i]) for i, x in enumerate(msgs) if x["role"] == "assistant"]


def _store(tmp: Path, runs: list[tuple[list[dict[str, Any]], str | None]]) -> Store:
    lines = [
        json.dumps({"messages": msgs, "metadata": {"run_id": f"r{k}", "agent": agent}})
        for k, (msgs, agent) in enumerate(runs)
    ]
    path = tmp / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = Store.open(None)
    ingest([path], store)
    return store


def _requests(store: Store, sql_prompt: str) -> dict[str, list[tuple[str | None, str | None]]]:
    rows = store.con.execute(
        f"SELECT trace_id, {sql_prompt}, system_prompt FROM events e "
        "WHERE type = 'llm_request' ORDER BY trace_id, seq"
    ).fetchall()
    out: dict[str, list[tuple[str | None, str | None]]] = {}
    for t, p, s in rows:
        out.setdefault(t, []).append((p, s))
    return out


def _contracts() -> ContractSet:
    cs: list[Contract] = []
    for i, rx in enumerate(REGEXES):
        f = Always(Not(Atom("llm_input_contains", (rx,))))
        cs.append(Contract(f"in{i}", "*", (Clause(f),)))
        cs.append(Contract(f"bot{i}", "bot", (Clause(f),)))
        cs.append(Contract(f"per{i}", "*", (Clause(f),), per_agent=True))
    for k in (0, 5, 20):
        cs.append(
            Contract(f"len{k}", "*", (Clause(Always(Cmp("<=", Atom("context_length"), Num(k)))),))
        )
    cs.append(Contract("sys", "*", (Clause(Always(Atom("system_prompt_present"))),)))
    return ContractSet(tuple(cs), {})


CONTRACTS = _contracts()
ATOMS = sorted({a for c in CONTRACTS.contracts for a in c.atoms()}, key=repr)


def _inline(store: Store, runs: list[tuple[list[dict[str, Any]], str | None]]) -> pa.Table:
    """The events table as it was before sharing: every request's prompt the old rendering."""
    table = store.con.sql("SELECT * FROM events ORDER BY trace_id, seq").to_arrow_table()
    old = {f"r{k}": _old(msgs) for k, (msgs, _) in enumerate(runs)}
    seen: dict[str, int] = {}
    prompts = []
    types = table.column("type").to_pylist()
    for t, typ in zip(table.column("trace_id").to_pylist(), types, strict=True):
        if typ == "llm_request":
            prompts.append(old[t][seen.get(t, 0)][0])
            seen[t] = seen.get(t, 0) + 1
        else:
            prompts.append(None)
    i = table.schema.get_field_index("prompt")
    table = table.set_column(i, "prompt", pa.array(prompts, pa.string()))
    for c in ("prompt_from", "prompt_chars"):
        j = table.schema.get_field_index(c)
        table = table.set_column(j, c, pa.nulls(table.num_rows, pa.int64()))
    return table


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(RUN, min_size=1, max_size=3))
def test_every_reader_and_verdict_is_the_old_rendering(tmp_path: Path, runs: Any) -> None:
    store = _store(tmp_path, runs)
    try:
        want = {f"r{k}": _old(msgs) for k, (msgs, _) in enumerate(runs) if _old(msgs)}
        # SQL readers (reports, explain, parquet, baseline) read prompt_sql
        assert _requests(store, prompt_sql("e")) == want
        # the reference engine's reader
        rows = resolve_prompts(
            store.con.sql("SELECT * FROM events ORDER BY trace_id, seq")
            .to_arrow_table()
            .to_pylist()
        )
        got: dict[str, list[tuple[str | None, str | None]]] = {}
        for r in rows:
            if r["type"] == "llm_request":
                got.setdefault(r["trace_id"], []).append((r["prompt"], r["system_prompt"]))
        assert got == want

        shared = store.con.sql("SELECT * FROM events ORDER BY trace_id, seq").to_arrow_table()
        inline = _inline(store, runs)
        # columnar grounding of the shared table = online grounding of the old events
        cols = ground_columns(shared, ATOMS)
        events = [event_from_row(r) for r in inline.to_pylist()]
        ids = [e.trace_id for e in events]
        online: list[dict[Atom, Any]] = []
        for t in dict.fromkeys(ids):
            online += ground_events(ATOMS, [e for e in events if e.trace_id == t])
        for a in ATOMS:
            col = cols[a]
            exp = [v[a] for v in online]
            unknown = [x is None for x in exp]
            assert col.unknown.tolist() == unknown, a
            known = [float(x) for x in exp if x is not None]
            assert np.asarray(col.value, dtype=float)[~col.unknown].tolist() == known, a

        # verdicts and violations, both engines, shared vs the old inline table
        base = evaluate(inline, CONTRACTS, engine="reference")
        for engine in ("columnar", "reference"):
            res = evaluate(shared, CONTRACTS, engine=engine)
            assert res.verdicts.to_pylist() == base.verdicts.to_pylist(), engine
            assert res.violations.to_pylist() == base.violations.to_pylist(), engine
    finally:
        store.close()


def test_a_long_transcript_is_stored_once(tmp_path: Path) -> None:
    """400 turns of 1 KB: the stored input text is about the transcript's size, not the sum
    of its prefixes (~80 MB before), and the last request's input is the whole history."""
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(400):
        msgs.append({"role": "assistant", "content": f"step {i}"})
        msgs.append({"role": "user", "content": f"{i} " + "o" * 1000})
    msgs.append({"role": "assistant", "content": "done"})
    store = _store(tmp_path, [(msgs, None)])
    try:
        (stored,) = store.con.execute(
            "SELECT sum(length(prompt)) FROM events WHERE prompt IS NOT NULL"
        ).fetchone() or (0,)
        assert 400 * 1000 < stored < 500 * 1000
        last = _requests(store, prompt_sql("e"))["r0"][-1][0]
        assert last == _old(msgs)[-1][0]
    finally:
        store.close()


def test_events_without_the_sharing_columns_evaluate_as_before() -> None:
    """A producer that never shares prompts may leave the two columns out."""
    from sponsio_audit.event import EVENT_SCHEMA, OPTIONAL_COLUMNS, event_row

    e = Event("llm_request", prompt="user: a", system_prompt="", trace_id="t")
    row = event_row(e)
    names = [n for n in EVENT_SCHEMA.names if n not in OPTIONAL_COLUMNS]
    table = pa.Table.from_pylist(
        [{k: row[k] for k in names}], schema=pa.schema([EVENT_SCHEMA.field(n) for n in names])
    )
    ok = evaluate(table, ContractSet((CONTRACTS.contracts[-2],), {}))  # context_length <= 20
    assert ok.verdicts.column("verdict").to_pylist() == ["pass"]


READER_CONTRACTS = """version: "1"
agents:
  "*":
    contracts:
      - id: no_secret
        G:
          pattern: prompt_injection_marker
          args: [["SECRET \\\\w+"]]
"""


def test_every_report_reads_the_same_text_as_from_the_old_store(tmp_path: Path) -> None:
    """Reports, explain, the baseline fingerprint (its matched argument is read from the
    blamed request's input) and parquet: rendered from the shared store, then from the
    same store rewritten with every request's old rendered prompt, byte for byte equal."""
    from typer.testing import CliRunner

    from sponsio_audit.cli import app
    from sponsio_audit.report import baseline, parquet
    from sponsio_audit.report.data import load

    msgs = [
        {"role": "system", "content": "be careful"},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "my SECRET token42 here"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": "done"},
    ]
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "chat.json").write_text(
        json.dumps({"messages": msgs, "metadata": {"run_id": "r0"}}), encoding="utf-8"
    )
    cfg = tmp_path / "sponsio.yaml"
    cfg.write_text(READER_CONTRACTS, encoding="utf-8")
    db = tmp_path / "a.duckdb"
    run = CliRunner()
    res = run.invoke(
        app, ["scan", str(tmp_path / "traces"), "-c", str(cfg), "--db", str(db), "-q", "-f", "json"]
    )
    assert res.exit_code == 1, res.output  # one violation

    def outputs(tag: str) -> dict[str, str]:
        out = {
            f: run.invoke(app, ["report", "--db", str(db), "-f", f]).stdout
            for f in ("json", "html", "markdown", "sarif")
        }
        out["explain"] = run.invoke(
            app, ["explain", "--db", str(db), "--trace", "r0", "-f", "json"]
        ).stdout
        pq = tmp_path / f"pq-{tag}"
        store = Store.open(db)
        try:
            parquet.write(store, baseline.with_matches(store, load(store)), pq)
        finally:
            store.close()
        out["parquet"] = run.invoke(app, ["report", "--parquet", str(pq), "-f", "json"]).stdout
        return out

    shared = outputs("shared")
    con = Store.open(db)
    try:
        (n,) = con.con.execute(
            "SELECT count(*) FROM events WHERE prompt_from IS NOT NULL"
        ).fetchone() or (0,)
        assert n == 2  # the first two requests share the last one's text
        old = [p for p, _ in _old(msgs)]
        for seq, text in zip((0, 2, 4), old, strict=True):
            con.con.execute(
                "UPDATE events SET prompt = ?, prompt_from = NULL, prompt_chars = NULL "
                "WHERE trace_id = 'r0' AND seq = ?",
                [text, seq],
            )
    finally:
        con.close()
    before = outputs("old")
    assert shared == before
    assert "SECRET token42" in shared["explain"] and '"fingerprint"' in shared["json"]


STEP = st.tuples(
    st.sampled_from(["llm_request", "llm_response", "tool_call"]),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["extend", "new", "same", "missing"]),
    TEXT,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(STEP, min_size=1, max_size=14))
def test_recorded_prompts_are_shared_only_when_verified(tmp_path: Path, steps: Any) -> None:
    """Native events of two agents whose prompts often extend the agent's previous one (and
    sometimes do not, repeat it, or are missing): every reader gets each recorded prompt,
    and both engines' verdicts equal those over the table as recorded."""
    last: dict[str, str] = {}
    lines, want = [], []
    for typ, agent, how, text in steps:
        d: dict[str, Any] = {"type": typ, "agent": agent}
        if typ == "llm_request" and how != "missing":
            prev = last.get(agent, "")
            p = {"extend": prev + text, "new": text, "same": prev}[how]
            d["prompt"], d["system_prompt"] = p, ""
            last[agent] = p
        want.append(d.get("prompt"))
        if typ == "tool_call":
            d["tool"] = "bash"
        lines.append(json.dumps(d))
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = Store.open(None)
    try:
        ingest([tmp_path / "t.jsonl"], store)
        got = store.con.execute(f"SELECT {prompt_sql('e')} FROM events e ORDER BY seq").fetchall()
        assert [g for (g,) in got] == want
        shared = store.con.sql("SELECT * FROM events ORDER BY trace_id, seq").to_arrow_table()
        assert [r["prompt"] for r in resolve_prompts(shared.to_pylist())] == want
        inline = shared.set_column(
            shared.schema.get_field_index("prompt"), "prompt", pa.array(want, pa.string())
        )
        for c in ("prompt_from", "prompt_chars"):
            j = inline.schema.get_field_index(c)
            inline = inline.set_column(j, c, pa.nulls(inline.num_rows, pa.int64()))
        base = evaluate(inline, CONTRACTS, engine="reference")
        for engine in ("columnar", "reference"):
            res = evaluate(shared, CONTRACTS, engine=engine)
            assert res.verdicts.to_pylist() == base.verdicts.to_pylist(), engine
    finally:
        store.close()
