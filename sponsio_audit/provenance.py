"""What ran, when, on what: the ``provenance`` and ``sources`` tables of an audit.

Every report carries the provenance (tool and semantics version, start time,
command line, contract files with their sha256, inputs with their counts);
``api.audit`` and ``scan --engine spark`` store it with ``save_provenance``.
``replace_tables`` is the one writer of the audit's tables into a store.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pyarrow as pa

from sponsio_audit.config.discovery import ConfigSource
from sponsio_audit.ingest import Store
from sponsio_audit.ltl.contract import Contract

SEMANTICS_VERSION = "1"
"""Revision of the verdict semantics (docs' SEMANTICS.md) the engines implement; bumped
when a verdict of the same trace and contract may change."""

SOURCES_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string()),
        pa.field("pack", pa.string()),
        pa.field("found_by", pa.string(), nullable=False),
    ]
)
"""The ``sources`` table: the contract files and packs in force, and how each was chosen."""


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def provenance(
    store: Store,
    contracts: Sequence[Contract],
    config_files: Sequence[str | Path],
    started: datetime,
    command: Sequence[str] | None = None,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """What ran, when, on what: tool and semantics version, start time, command line, each
    contract file (the configuration's files, then any other file a contract came from)
    with its sha256, pack name and contract count, each input file with its counts, and
    the audit's ``warnings`` (a worker that died: what a job reading only the report must
    still be told)."""
    from sponsio_audit.config import shipped_packs

    try:
        tool_version = version("sponsio-audit")
    except PackageNotFoundError:
        tool_version = "unknown"
    packs = {p.resolve(): name for name, p in shipped_packs()}
    paths = [str(Path(p).resolve()) for p in config_files]
    paths += [c.origin[0] for c in contracts if c.origin]
    contract_files = [
        {
            "path": path,
            "pack": packs.get(Path(path)),
            "sha256": _sha256(Path(path)),
            "contracts": sum(1 for c in contracts if c.origin and c.origin[0] == path),
        }
        for path in dict.fromkeys(paths)
    ]
    cur = store.con.cursor().execute(
        "SELECT f.path, f.format, f.bytes, f.sha256, f.records, f.skipped, "
        f"(SELECT count(*) FROM {store.span_table} s WHERE s.file_id = f.file_id) AS spans, "
        "(SELECT count(*) FROM events e WHERE e.file_id = f.file_id) AS events "
        "FROM files f ORDER BY f.file_id"
    )
    names = [d[0] for d in cur.description or ()]
    inputs = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    return {
        "tool": "sponsio-audit",
        "tool_version": tool_version,
        "semantics_version": SEMANTICS_VERSION,
        "run_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": list(sys.argv if command is None else command),
        "contract_files": contract_files,
        "inputs": inputs,
        "warnings": list(warnings),
    }


def sources_table(sources: Sequence[ConfigSource]) -> pa.Table:
    """The ``sources`` table of the config sources given to ``audit``."""
    rows = [{"path": s.path, "pack": s.pack, "found_by": s.found_by} for s in sources]
    return pa.Table.from_pylist(rows, schema=SOURCES_SCHEMA)


def save_provenance(
    store: Store,
    contracts: Sequence[Contract],
    config_files: Sequence[str | Path],
    started: datetime,
    sources: Sequence[ConfigSource] = (),
    command: Sequence[str] | None = None,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """Store the provenance and sources of an audit (``audit``, and ``scan --engine spark``,
    whose tables Spark made); the provenance."""
    prov = provenance(store, contracts, config_files, started, command, warnings)
    replace_tables(
        store,
        provenance=pa.table({"doc": [json.dumps(prov, ensure_ascii=False)]}),
        sources=sources_table(sources),
    )
    return prov


def replace_tables(store: Store, **tables: pa.Table) -> None:
    """Replace the store's tables (Arrow registration, no SQL built from data)."""
    con = store.con.cursor()  # own cursor: no clash with an unfinished result of the store's
    try:
        for name, table in tables.items():
            con.register("_incoming", table)
            con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM _incoming')
            con.unregister("_incoming")
    finally:
        con.close()
