"""Shared helpers: the fixture generator module, fresh stores, events as dicts."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ingest.store import prompt_sql
from tests.conftest import arrow_of

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
OTEL = FIXTURES / "otel"
EXTERNAL = REPO / ".." / "shared" / "data" / "external"
T0 = 1_700_000_000_000_000_000
MS = 1_000_000


def _load_make_otel() -> Any:
    spec = importlib.util.spec_from_file_location("make_otel", FIXTURES / "make_otel.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_otel"] = mod
    spec.loader.exec_module(mod)
    return mod


make_otel = _load_make_otel()


def split_trace(
    directory: Path, names: tuple[str, str], agent: str, service: str, trace_base: int
) -> tuple[Path, Path]:
    """One trace (an ``invoke_agent`` span and its ``execute_tool`` child) written as two
    JSON-lines files in ``directory``: the tool span in ``names[0]``, its parent agent span
    in ``names[1]`` (a trace that no single file or chunk holds whole)."""
    req = make_otel.spans_request(
        [
            {
                "name": "invoke_agent a",
                "attrs": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent},
                "start": 0,
                "end": 9,
                "children": [
                    {
                        "name": "execute_tool t",
                        "attrs": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
                        "start": 1,
                        "end": 2,
                    }
                ],
            }
        ],
        service,
        make_otel.FixedIds(trace_base=trace_base),
    )
    doc = make_otel.to_json(req)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [s["name"] for s in spans] == ["execute_tool t", "invoke_agent a"]
    paths = []
    for name, keep in zip(names, spans, strict=True):
        doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = [keep]
        (directory / name).write_text(json.dumps(doc) + "\n")
        paths.append(directory / name)
    return paths[0], paths[1]


def load(*paths: str | Path, group_by: str = "trace", db: Path | None = None) -> tuple[Store, Any]:
    """A fresh store (in memory, or the database file ``db``) with ``paths`` ingested,
    and the summary. Only a file store keeps ``spans.attributes``/``resource``."""
    store = Store.open(db)
    return store, ingest(list(paths), store, group_by=group_by)


def rows(store: Store, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """Query result as dicts."""
    return arrow_of(store.con, sql, params).to_pylist()


def events(store: Store) -> list[dict[str, Any]]:
    """All events ordered by (trace_id, seq), shared prompts written out."""
    sql = f"SELECT * REPLACE ({prompt_sql('e')} AS prompt) FROM events e ORDER BY trace_id, seq"
    return rows(store, sql)


def judged(
    path: Path, contracts: str, tmp_path: Path
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """``path`` audited against the ``sponsio.yaml`` text ``contracts``: the verdict of each
    contract id, and the events (``events``)."""
    from sponsio_audit.api import audit
    from sponsio_audit.config import load_config

    cfg = tmp_path / "contracts.yaml"
    cfg.write_text(contracts, encoding="utf-8")
    result = audit([path], load_config(cfg))
    try:
        verdicts = {r["contract_id"]: str(r["verdict"]) for r in result.verdicts.to_pylist()}
        return verdicts, events(result.store)
    finally:
        result.store.close()


def no_rm(field: str, regex: str = r"rm\s+-rf", more: str = "") -> str:
    """A ``sponsio.yaml`` whose contract ``no_rm`` is ``arg_blacklist(bash, field, regex)``
    (``more``: further contract entries, indented as list items)."""
    return (
        'version: "1"\nagents:\n  "*":\n    contracts:\n      - id: no_rm\n'
        f"        G: {{pattern: arg_blacklist, args: [bash, {field}, ['{regex}']]}}\n{more}"
    )


def check(event: dict[str, Any], **expected: Any) -> None:
    """Assert the named fields of an event row."""
    got = {k: event[k] for k in expected}
    assert got == expected


@pytest.fixture
def external() -> Path:
    """The shared external data directory (skip when absent)."""
    if not EXTERNAL.is_dir():
        pytest.skip(f"shared external data not found at {EXTERNAL}")
    return EXTERNAL


def ingest_while_changed(
    path: Path,
    change: Callable[[Path], None],
    jobs: int,
    monkeypatch: pytest.MonkeyPatch,
    *,
    after_sniff: bool = False,
) -> tuple[Store, Any]:
    """Ingest ``path`` into a new store; once it is measured (at its format's sniff, or just
    after it), another program changes it (``change(path)``: appends to it, cuts it,
    replaces it): a live log."""
    from sponsio_audit.ingest import pipeline

    sniff = pipeline.sniff
    changed: list[int] = []

    def sniff_then_change(open_: Any, limits: Any) -> Any:
        got = sniff(open_, limits) if after_sniff else None
        if not changed:
            change(path)
            changed.append(1)
        return got if after_sniff else sniff(open_, limits)

    monkeypatch.setattr(pipeline, "sniff", sniff_then_change)
    store = Store.open(None)
    got = ingest([path], store, jobs=jobs)
    monkeypatch.setattr(pipeline, "sniff", sniff)
    assert changed, "the file did change"
    return store, got


WAYS = (
    "one process",
    "one process, hashed while read",
    "workers",
    "workers, hashed while read",
    "gzip, one process",
    "protobuf, one process",
)
"""The ways a file is read, for tests of files changed while read (``read_as``; the file's
own test makes the gzip and protobuf ones)."""


def read_as(how: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """Set ingest up to read a file as ``how`` names it (several chunks; "hashed while
    read": a file of any size; "workers": two worker processes, none of it read here);
    returns the jobs to ingest with."""
    from sponsio_audit.ingest import chunks, pipeline, workers

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2_000)
    if how.endswith("hashed while read"):
        monkeypatch.setattr(pipeline, "HASH_THREAD_BYTES", 0)
    if how.startswith("workers"):
        monkeypatch.setattr(workers, "START_INLINE", False)
        return 2
    return 1
