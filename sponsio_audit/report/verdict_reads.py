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

from sponsio_audit.verdicts import as_stored
from sponsio_audit.vocab import VERDICTS

UNDECIDED = ("unverifiable", "skipped")
"""The verdicts a report lists one by one, with their reasons."""
_UNDECIDED_COLUMNS = ["trace_id", "contract_id", "guarantee", "verdict", "reason"]


def counts_by_contract(verdicts: pa.Table) -> dict[str, dict[str, int]]:
    """{contract id: {verdict: count}} of the verdicts found (``data.GROUPED``)."""
    contract, verdict = verdicts.column("contract_id"), verdicts.column("verdict")
    out: dict[str, dict[str, int]] = {}
    for v in VERDICTS:  # value_counts per verdict: chunks' dictionaries may differ
        for item in pc.value_counts(contract.filter(pc.equal(verdict, v))).to_pylist():
            out.setdefault(str(item["values"]), {})[v] = int(item["counts"])
    return out


def undecided(verdicts: pa.Table) -> list[dict[str, Any]]:
    """The unverifiable and skipped verdicts with their reasons, by contract, trace and
    guarantee (``data.UNDECIDED``)."""
    keep = pc.is_in(verdicts.column("verdict"), value_set=pa.array(UNDECIDED))
    rows = as_stored(verdicts.select(_UNDECIDED_COLUMNS).filter(keep))
    order = [("contract_id", "ascending"), ("trace_id", "ascending"), ("guarantee", "ascending")]
    out: list[dict[str, Any]] = rows.sort_by(order).to_pylist()
    return out


def all_rows(verdicts: pa.Table) -> list[dict[str, Any]]:
    """Every verdict by trace, contract and guarantee (JUnit's ``verdict_rows``)."""
    order = [("trace_id", "ascending"), ("contract_id", "ascending"), ("guarantee", "ascending")]
    out: list[dict[str, Any]] = as_stored(verdicts).sort_by(order).to_pylist()
    return out
