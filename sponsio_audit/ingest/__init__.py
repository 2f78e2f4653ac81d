"""Ingest: read trace files of every supported format into the DuckDB store.

``ingest(paths, Store.open(path_or_None))`` sniffs each file by its bytes,
decodes OTLP (JSON, protobuf, compressed), Sponsio session logs, native traces
and chat transcripts, and fills the ``files``, ``skipped``, ``spans``,
``events`` and ``decisions`` tables (see ``pipeline`` for the passes).
The three names are imported on first use (module ``__getattr__``), so that a
worker process, which imports only the decoding modules, loads neither the
pipeline nor DuckDB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sponsio_audit.lazy import exports

__all__ = ["IngestSummary", "Store", "ingest"]

_HOMES = {
    "IngestSummary": "sponsio_audit.ingest.pipeline",
    "ingest": "sponsio_audit.ingest.pipeline",
    "Store": "sponsio_audit.ingest.store",
}

if TYPE_CHECKING:
    from sponsio_audit.ingest.pipeline import IngestSummary, ingest
    from sponsio_audit.ingest.store import Store


__getattr__, __dir__ = exports(__name__, _HOMES)
