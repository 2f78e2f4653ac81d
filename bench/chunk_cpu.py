"""CPU µs per span of ingest's per-chunk work (``inchunk.decode_traced``) in this process.

``python bench/chunk_cpu.py FILE [--chunks 20] [--repeat 3] [--no-raw-json]``: the first
``--chunks`` chunks of an OTLP file (JSON lines or protobuf), each decoded with its pass-1
events ``--repeat`` times; prints the median per-span CPU (``thread_time``) of the whole
pass, so two interpreters (old and new code) can be compared run against run on a shared
machine (``bench/chunk_ab.sh``).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from itertools import islice
from pathlib import Path

from sponsio_audit.arrow_setup import own_process, skip_pandas
from sponsio_audit.ingest import chunks, inchunk
from sponsio_audit.ingest.sniff import sniff


def first_chunks(file: str, n: int, raw_json: bool = True) -> tuple[str, list[chunks.RecordChunk]]:
    """This process set up as a command's, and the format and first ``n`` chunks of the
    OTLP ``file`` (also ``bench/chunk_stages.py``'s)."""
    own_process()
    skip_pandas()
    path = Path(file)

    def open_():
        return path.open("rb")

    fmt, layout = sniff(open_)
    decoder = "otlp_proto" if fmt == "otlp_proto" else "otlp_json"
    todo = chunks.record_chunks(decoder, layout, open_, 1, 1, raw_json=raw_json)
    return fmt, list(islice(todo, n))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-raw-json", action="store_true")
    a = ap.parse_args()
    fmt, todo = first_chunks(a.file, a.chunks, raw_json=not a.no_raw_json)
    gc.collect()
    times = []
    spans = 0
    for _ in range(a.repeat):
        t = time.thread_time()
        spans = 0
        for ch in todo:
            d, _tr = inchunk.decode_traced(ch)
            spans += d.spans.num_rows
        times.append(time.thread_time() - t)
    print(f"{statistics.median(times) / spans * 1e6:.3f} us/span  ({spans} spans, {fmt})")


if __name__ == "__main__":
    main()
