"""The report's reads of the ``verdicts`` table, from the audit's own Arrow table.

Right after a scan the verdicts are in memory (``AuditResult.verdicts``); a scan
whose store nobody reads afterwards (no ``--db``, no ``--parquet``) never copies
them into DuckDB (``api.audit(lean=True)``). These give what ``report.data``'s
queries give from a stored table, row for row and in the same order, so a report
is the same whichever way it was loaded (``tests/report/test_verdict_reads.py``).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.verdicts import as_stored, count_by
from sponsio_audit.vocab import VERDICTS

UNDECIDED = ("unverifiable", "skipped")
"""The verdicts a report lists one by one, with their reasons."""
_UNDECIDED_COLUMNS = ["trace_id", "contract_id", "guarantee", "verdict", "reason"]


def counts_by_contract(verdicts: pa.Table) -> dict[str, dict[str, int]]:
    """{contract id: {verdict: count}} of the verdicts found (``data.GROUPED``)."""
    verdict = verdicts.column("verdict")
    out: dict[str, dict[str, int]] = {}
    for v in VERDICTS:
        for cid, n in count_by(verdicts.filter(pc.equal(verdict, v)), "contract_id").items():
            out.setdefault(cid, {})[v] = n
    return out


def undecided(verdicts: pa.Table) -> list[dict[str, Any]]:
    """The unverifiable and skipped verdicts with their reasons, by contract, trace and
    guarantee (``data.UNDECIDED``)."""
    keep = pc.is_in(verdicts.column("verdict"), value_set=pa.array(UNDECIDED))
    rows = verdicts.select(_UNDECIDED_COLUMNS).filter(keep)
    return _rows_by(rows, "contract_id", "trace_id", "guarantee")


def all_rows(verdicts: pa.Table) -> list[dict[str, Any]]:
    """Every verdict by trace, contract and guarantee (JUnit's ``verdict_rows``)."""
    return _rows_by(verdicts, "trace_id", "contract_id", "guarantee")


def _rows_by(table: pa.Table, *keys: str) -> list[dict[str, Any]]:
    """``table``'s rows as stored (``as_stored``) as dicts, as ``ORDER BY keys`` sorts them."""
    out: list[dict[str, Any]] = (
        as_stored(table).sort_by([(k, "ascending") for k in keys]).to_pylist()
    )
    return out
