"""``--parquet DIR``: the audit's tables as Parquet files for notebooks and warehouses.

Three files, written with ``pyarrow.parquet`` (zstd), rows in the stated order:

``violations.parquet`` — one row per offending event of a violated guarantee,
ordered by (trace_id, contract_id, guarantee, seq):
  trace_id, contract_id, guarantee (index in the contract), guarantee_text
  (formula), kind (guarantee | liveness | assumption), severity (high | medium
  | low), strategy (block | escalate | warn | redirect), seq (step of the
  event in its trace), blamed (true for the event the violation is blamed
  on, one per violation), span_id, tool, agent, evidence (one sentence,
  never argument values), opened_seq (step that opened a liveness
  obligation), file_id, record (record number in the file; the line for
  JSON lines), path (input file), fingerprint (baseline fingerprint on
  blamed rows, null otherwise).

``verdicts.parquet`` — one row per (trace, contract, guarantee), ordered by
those: trace_id, contract_id, guarantee, guarantee_text, verdict (pass |
violated | unverifiable | not_applicable | skipped), kind, blame_seq,
opened_seq, offending (number of offending events), reason.

``events.parquet`` — the normalised events (SEMANTICS.md §1), ordered by
(trace_id, seq): trace_id, seq, span_id, type, agent, tool, args (compact
JSON, null when not recorded), content, prompt, system_prompt, tokens_in,
tokens_out, tokens_total, start_ns, duration_ns, target, conversation_id,
convention, inferred, file_id, record. Events are written as recorded (not
redacted): the file is for analysis next to the original traces.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sponsio_audit.ingest import Store
from sponsio_audit.report import baseline
from sponsio_audit.report.data import ReportData, arrow

FILES = ("violations.parquet", "verdicts.parquet", "events.parquet")


def write(store: Store, data: ReportData, directory: str | Path) -> list[Path]:
    """Write the three files into ``directory`` (created); their paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    viol = arrow(
        store,
        "SELECT v.*, f.path FROM violations v LEFT JOIN files f USING (file_id) "
        "ORDER BY trace_id, contract_id, guarantee, seq",
    )
    fps = [
        baseline.fingerprint(row, data.contract(row["contract_id"])) if row["blamed"] else None
        for row in viol.to_pylist()
    ]
    viol = viol.append_column("fingerprint", pa.array(fps, type=pa.string()))
    verdicts = arrow(store, "SELECT * FROM verdicts ORDER BY trace_id, contract_id, guarantee")
    events = arrow(store, "SELECT * FROM events ORDER BY trace_id, seq")
    paths = []
    for name, table in zip(FILES, (viol, verdicts, events), strict=True):
        path = out / name
        pq.write_table(table, path, compression="zstd")
        paths.append(path)
    return paths
