"""The audit on Apache Spark, behind the ``[spark]`` extra (``pip install 'sponsio-audit[spark]'``).

``audit(events_df, config)`` evaluates a DataFrame of events with the project's
own engine (``sponsio_audit.evaluate``) inside ``mapInArrow``: the same
verdict and violation rows as ``api.audit`` (with ``traces=``, the traces with
no events judged too). ``ingest(spark, paths)`` reads trace files on the
executors with the project's own decoders, GenAI log records attached to
their spans and every trace listed, as the store ingest does. On one machine
the default engine is faster; Spark pays when the traces are already in a
cluster's storage or do not fit one machine (README, "Spark").
"""

from __future__ import annotations

from sponsio_audit.spark.auditing import audit
from sponsio_audit.spark.ingestion import Ingested, ingest

__all__ = ["Ingested", "audit", "ingest"]
