"""Shared test settings: a hypothesis profile for CI and the path to shared data."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` beside the repository (design docs and external data)."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} not found: the shared folder must sit beside the repository")
    return SHARED


def arrow_of(con: Any, sql: str, params: Any = None) -> pa.Table:
    """A query's result as one Arrow table, whatever DuckDB version answers (2.0: a reader)."""
    table = con.sql(sql, params=params).arrow()
    return table.read_all() if isinstance(table, pa.RecordBatchReader) else table


def fetched(con: Any, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    """``con.execute(sql).fetchall()`` read through Arrow: DuckDB before 2.0 needs pytz (no
    dependency of ours) to hand a TIMESTAMPTZ value (``decisions.ts``) to Python itself."""
    table = arrow_of(con, sql, params)
    if not table.num_columns:
        return []
    return list(zip(*(c.to_pylist() for c in table.columns), strict=True))
