"""A record nested deeper than JSON readers go is read the same in every process.

``--jobs 2`` decodes the first chunks in the scan's own process (whose formula
thread allows 60,000 frames, ``recursion.deep``) until the workers are up, the rest
in workers (Python's default 1,000): a line nesting 3,000 arrays was read in one and
skipped as "JSON nested too deep" in the other, so the same scan found a violation
in some runs only. Past orjson's 1,024 levels a line is always too deep.
"""

from __future__ import annotations

import threading

import pytest

from sponsio_audit.ingest.chunks import _record
from sponsio_audit.ingest.columns import Columns
from sponsio_audit.ingest.layers import BadRecord
from sponsio_audit.ingest.limits import DEFAULT
from sponsio_audit.recursion import deep


def _line(depth: int) -> bytes:
    value = b'{"stringValue":"x"}'
    for _ in range(depth):
        value = b'{"arrayValue":{"values":[' + value + b"]}}"
    span = b'{"traceId":"ab","spanId":"01","name":"s","attributes":[{"key":"k","value":%s}]}'
    return b'{"resourceSpans":[{"scopeSpans":[{"spans":[' + span % value + b"]}]}]}"


def _outcome(line: bytes) -> str:
    cols = Columns(0, 0)
    try:
        _record("otlp_json", 2, line, DEFAULT, cols)
    except BadRecord as e:
        return f"skipped: {e}"
    return f"{len(cols.attrs)} span"


def _in_plain_thread(line: bytes) -> str:
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(_outcome(line)))
    t.start()
    t.join()
    return out[0]


@pytest.mark.parametrize("depth", [10, 400, 600, 3000])
def test_a_deep_record_reads_the_same_in_a_worker_and_in_the_scans_process(depth: int) -> None:
    line = _line(depth)
    here = deep(_outcome, line)
    assert here == _in_plain_thread(line)
    assert here.startswith("skipped: JSON nested too deep") == (depth * 3 > 1024)
