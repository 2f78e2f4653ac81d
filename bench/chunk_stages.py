"""CPU µs per span of each stage of ingest's per-chunk work, without per-span wrappers.

``python bench/chunk_stages.py FILE [--chunks 20] [--repeat 3]``: the first chunks of an
OTLP file decoded stage by stage (record decode, conventions, raw attribute JSON, Arrow,
pass-1 events), each stage timed once per record or chunk with ``thread_time``, so the
figures carry no per-span instrumentation (``bench/ingest.py``'s wrappers add ~40%).
The stages are run the way ``chunks._decoded`` runs them, for a first-chunk-free median.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

from sponsio_audit.ingest import chunks, inchunk
from sponsio_audit.ingest.columns import Columns

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chunk_cpu import first_chunks

STAGES = ("decode", "conventions", "attrs json", "arrow", "events")


def _chunk(ch: chunks.RecordChunk, acc: dict[str, float]) -> int:
    clock = time.thread_time
    cols = Columns(ch.file_id, ch.run, ch.raw_json)
    c = cols.cols
    names, recs, attrs_json = c["name"], c["record"], c["attributes"]
    facts, attrs, event_attrs = cols.facts, cols.attrs, cols.event_attrs
    for no, rec in ch.records:
        mark = len(facts)
        t0 = clock()
        chunks._record(ch.fmt, no, rec, ch.limits, cols)
        t1 = clock()
        read = attrs
        if event_attrs:
            read = [event_attrs.get(i, a) for i, a in enumerate(attrs)]
        facts.extend(map(chunks.span_facts, names[mark:], read))
        t2 = clock()
        attrs_json.extend(map(chunks.dumps_attrs, attrs))
        t3 = clock()
        recs.extend([no] * len(attrs))
        attrs.clear()
        event_attrs.clear()
        acc["decode"] += t1 - t0
        acc["conventions"] += t2 - t1
        acc["attrs json"] += t3 - t2
    t3 = clock()
    spans, _facts = cols.batches()
    t4 = clock()
    d = chunks.Decoded(len(ch.records), spans, _facts, [], None, cols)
    inchunk.chunk_events(d)
    t5 = clock()
    acc["arrow"] += t4 - t3
    acc["events"] += t5 - t4
    return spans.num_rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    fmt, todo = first_chunks(a.file, a.chunks)
    gc.collect()
    runs: list[dict[str, float]] = []
    n = 0
    gc.disable()
    for _ in range(a.repeat):
        acc = dict.fromkeys(STAGES, 0.0)
        n = sum(_chunk(ch, acc) for ch in todo)
        runs.append(acc)
    gc.enable()
    med = {k: statistics.median(r[k] for r in runs) / n * 1e6 for k in STAGES}
    total = statistics.median(sum(r.values()) for r in runs) / n * 1e6
    print(f"{fmt} {n} spans: " + "  ".join(f"{k} {v:.2f}" for k, v in med.items()), end="")
    print(f"  total {total:.2f} us/span")


if __name__ == "__main__":
    main()
