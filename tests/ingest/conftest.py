"""Shared helpers: the fixture generator module, fresh stores, events as dicts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ingest.store import prompt_sql

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


def load(*paths: str | Path, group_by: str = "trace", db: Path | None = None) -> tuple[Store, Any]:
    """A fresh store (in memory, or the database file ``db``) with ``paths`` ingested,
    and the summary. Only a file store keeps ``spans.attributes``/``resource``."""
    store = Store.open(db)
    return store, ingest(list(paths), store, group_by=group_by)


def rows(store: Store, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """Query result as dicts."""
    cur = store.con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def events(store: Store) -> list[dict[str, Any]]:
    """All events ordered by (trace_id, seq), shared prompts written out."""
    sql = f"SELECT * REPLACE ({prompt_sql('e')} AS prompt) FROM events e ORDER BY trace_id, seq"
    return rows(store, sql)


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
