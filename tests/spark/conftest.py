"""One local Spark session for every Spark test (starting a JVM costs seconds).

The session is small on purpose: ``local[2]``, three shuffle partitions, no
UI, bound to 127.0.0.1, and Arrow batches of 7 rows, so that a trace of the
fixtures spans several batches of one ``mapInArrow`` call and the code that
stitches batches together is exercised.

Outside CI a missing pyspark or Java skips the Spark tests with the reason;
with ``CI=true`` it fails them (the CI installs both, see ``.ci/run``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

ARROW_BATCH_ROWS = 7
"""``spark.sql.execution.arrow.maxRecordsPerBatch`` of the test session."""


def unavailable(reason: str) -> None:
    """Skip (outside CI) or fail (``CI=true``) a test that needs Spark."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"Spark is required under CI=true: {reason}", pytrace=False)
    pytest.skip(f"Spark not available: {reason}")


def _start() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        unavailable(f"pyspark is not installed ({e}); pip install -e '.[spark]'")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        unavailable("no Java runtime (java not on PATH, JAVA_HOME unset)")
    # the Python workers must run this interpreter (the venv with the package)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    try:
        return (
            SparkSession.builder.master("local[2]")
            .appName("sponsio-audit-tests")
            .config("spark.sql.shuffle.partitions", "3")
            .config("spark.default.parallelism", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.memory", "1g")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(ARROW_BATCH_ROWS))
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
    except Exception as e:  # no JVM, port clash, …: the reason, not a traceback
        unavailable(f"the local session did not start: {type(e).__name__}: {e}"[:500])


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The shared local SparkSession (stopped, with its JVM, at the end of the session)."""
    session = _start()
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
