"""Ingest: read trace files of every supported format into the DuckDB store.

``ingest(paths, Store.open(path_or_None))`` sniffs each file by its bytes,
decodes OTLP (JSON, protobuf, compressed), Sponsio session logs, native traces
and chat transcripts, and fills the ``files``, ``skipped``, ``spans``,
``events`` and ``decisions`` tables (see ``pipeline`` for the passes).
"""

from sponsio_audit.ingest.pipeline import IngestSummary, ingest
from sponsio_audit.ingest.store import Store

__all__ = ["IngestSummary", "Store", "ingest"]
