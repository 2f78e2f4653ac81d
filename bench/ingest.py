"""Ingest benchmark: 200k and 1M GenAI spans as OTLP JSONL and length-prefixed protobuf.

``python bench/ingest.py [--sizes 200000,1000000] [--formats jsonl,proto] [--jobs 1,2]``
``python bench/ingest.py --quick`` (20k spans, for a first look)
``python bench/ingest.py --repeat 5`` (five uninstrumented runs of each configuration)

Files are generated into a temp dir (a template request of 1,000 spans, 100
traces of 10 spans, made with the protobuf classes; every request gets new
trace ids by a byte-level id substitution, so generation is fast). Each
(size, format, jobs) is ingested in its own subprocess into a database file, which
prints spans/s and its peak RSS (``ru_maxrss``), so RSS is per size; with
``jobs > 1`` the largest worker process's peak RSS (``VmHWM``, polled from
/proc) is printed beside it, and the workers' forkserver is started and waited for
before the timed ingest (``_prestarted``), as ``scan`` starts it before it ingests.

Each (size, format, jobs) is also run a second time, instrumented, for CPU µs per
span of every stage, measured in the process that runs it by wrapping ingest's
functions with ``thread_time`` counters (exclusive times: a stage nested in
another is not counted twice; the inserts run on the store's writer thread, beside
the decoding, so the stages add up to CPU, not to wall time). The wrappers
cost about 1 µs per call, and some run per span, so spans/s, wall, CPU and RSS
come from the first run, which has none; the stage line says how much CPU the
instrumented run took beside it. Stages:
``decode`` (record parse and OTLP span extraction), ``attrs json`` (the raw
``spans.attributes`` text), ``conventions`` (span → facts), ``arrow`` (row
tuples → Arrow batches), ``store write`` (DuckDB inserts, pass-1 events staged and
written included), ``events`` (a chunk's spans grouped by trace → their events;
in pass 2 after Arrow → Python) and ``other`` (the rest: file reading,
chunking, pass 2's query). With ``jobs > 1`` the per-span stages run in the
workers, so only the main process's stages are shown; the machine is
shared, so CPU time is the steadier figure.

Each configuration's uninstrumented run is repeated ``--repeat`` times (3 by
default), the configurations of one file alternated so that a drift of the
machine falls on all of them; the line gives the median spans/s with the range,
and the ``--jobs`` ratio is of medians. Each run also prints its kernel CPU and
minor page faults per span: on a VM whose host backs guest memory lazily, a
process's fresh memory costs a host fault on first touch (``ingest_floor.py``'s
"fresh memory" line measures it), which no user-space profile shows.

It prints the machine's speed at the start and the end (``machine_speed``: the
``timeit`` figure of plain Python): on a shared VM it moves, and figures of runs at
different speeds do not compare.

With more than one job, it prints a second bound (``cpu_bound``): the CPU the
jobs=2 run used, main process and workers, spread over the machine's CPUs with
nothing serial, against jobs=1's wall, which already keeps more than one CPU busy
(the store's writes run on a thread beside the decoding).

With jobs 2 among the runs, it also prints the ceiling of the jobs=2 / jobs=1
ratio on this machine at that moment (``ceiling``): a worker's own per-chunk work
done by two processes at once against one, nothing else around it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

SPANS_PER_TRACE = 10
TRACES_PER_REQUEST = 100
MARK = bytes.fromhex("feedface") + bytes(8)
T0 = 1_700_000_000_000_000_000
MEMORY_LIMIT = "256MB"


def _kv(key: str, v: Any) -> KeyValue:
    if isinstance(v, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=v))
    if isinstance(v, int):
        return KeyValue(key=key, value=AnyValue(int_value=v))
    return KeyValue(key=key, value=AnyValue(string_value=str(v)))


def template() -> ExportTraceServiceRequest:
    """One request of ``TRACES_PER_REQUEST`` GenAI traces (agent, 3×(chat, tool), 3 http)."""
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend([_kv("service.name", "bench-agent"), _kv("host.name", "h1")])
    ss = rs.scope_spans.add()
    ss.scope.name = "bench"
    inp = json.dumps(
        [
            {"role": "system", "parts": [{"type": "text", "content": "You are a travel agent."}]},
            {
                "role": "user",
                "parts": [{"type": "text", "content": "Book me a hotel in Paris for 2 nights."}],
            },
        ]
    )
    out = json.dumps(
        [
            {
                "role": "assistant",
                "parts": [
                    {
                        "type": "tool_call",
                        "id": "c1",
                        "name": "search_hotels",
                        "arguments": {"city": "Paris", "nights": 2},
                    }
                ],
            }
        ]
    )
    for t in range(TRACES_PER_REQUEST):
        tid = MARK + t.to_bytes(4, "big")
        root = (t << 8) + 1
        spans = [
            (
                root,
                0,
                "invoke_agent planner",
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "planner",
                    "gen_ai.conversation.id": f"conv-{t}",
                },
            )
        ]
        for k in range(3):
            spans.append(
                (
                    root + 1 + 3 * k,
                    root,
                    "chat gpt-4o",
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "gpt-4o",
                        "gen_ai.input.messages": inp,
                        "gen_ai.output.messages": out,
                        "gen_ai.usage.input_tokens": 120,
                        "gen_ai.usage.output_tokens": 30,
                    },
                )
            )
            spans.append(
                (
                    root + 2 + 3 * k,
                    root,
                    "execute_tool search_hotels",
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "search_hotels",
                        "gen_ai.tool.call.id": "c1",
                        "gen_ai.tool.call.arguments": '{"city": "Paris", "nights": 2}',
                        "gen_ai.tool.call.result": '{"hotels": ["Ritz", "Lutetia"]}',
                    },
                )
            )
            spans.append(
                (
                    root + 3 + 3 * k,
                    root + 2 + 3 * k,
                    "GET",
                    {
                        "http.request.method": "GET",
                        "url.full": "https://api.example.com/hotels?city=Paris",
                        "http.response.status_code": 200,
                    },
                )
            )
        for i, (sid, parent, name, attrs) in enumerate(spans):
            sp = ss.spans.add()
            sp.trace_id = tid
            sp.span_id = sid.to_bytes(8, "big")
            if parent:
                sp.parent_span_id = parent.to_bytes(8, "big")
            sp.name = name
            sp.kind = 3 if name.startswith(("chat", "GET")) else 1
            sp.start_time_unix_nano = T0 + i * 1_000_000
            sp.end_time_unix_nano = T0 + i * 1_000_000 + 500_000
            sp.attributes.extend(_kv(k, v) for k, v in attrs.items())
    return req


def generate(directory: Path, spans: int, fmt: str) -> Path:
    """Write ``spans`` spans as ``fmt`` (jsonl | proto) into ``directory``; returns the file."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
    from make_otel import delimited, to_json  # fixtures/make_otel.py

    req = template()
    n_req = spans // (SPANS_PER_TRACE * TRACES_PER_REQUEST)
    path = directory / f"spans_{spans}.{'jsonl' if fmt == 'jsonl' else 'pb'}"
    with open(path, "wb") as f:
        if fmt == "jsonl":
            body = json.dumps(to_json(req), separators=(",", ":")).encode() + b"\n"
            mark = MARK.hex().encode()
            for r in range(n_req):
                f.write(body.replace(mark, bytes.fromhex("feedface").hex().encode() + b"%016x" % r))
        else:
            body = delimited([req.SerializeToString()])
            for r in range(n_req):
                f.write(body.replace(MARK, MARK[:4] + r.to_bytes(8, "big")))
    return path


def machine_speed() -> str:
    """How fast this machine runs plain Python now: ``python -m timeit 'sum(range(10**6))'``'s
    figure (best of 5 × 20 loops). On a shared VM it moved 10-20 ms between sessions and
    within one; printed at a run's start and end, it tells which figures are comparable."""
    import timeit

    best = min(timeit.repeat("sum(range(10**6))", number=20, repeat=5)) / 20
    return f"machine: sum(range(10**6)) {best * 1e3:.1f} ms (best of 5 x 20; 10-13 ms when fast)"


def compiled() -> str:
    """Compile ``sponsio_audit`` to bytecode where it lies, as ``pip install`` does, and say so.

    From an editable checkout with ``PYTHONDONTWRITEBYTECODE`` set (as on some CI machines
    and sandboxes), every process would otherwise compile the package's sources again: 0.2
    s of a 200k-span ``scan`` and 0.04-0.07 s of a forkserver's start measured here, a cost
    no installed copy has. The ``__pycache__`` directories are ignored by git."""
    import importlib.util

    spec = importlib.util.find_spec("sponsio_audit")
    if spec is None or not spec.submodule_search_locations:
        return "bytecode: sponsio_audit not found"
    where = next(iter(spec.submodule_search_locations))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-m", "compileall", "-q", where], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        why = done.stdout.strip()[-200:]
        return f"bytecode: compileall failed ({why}), sources compiled in each process"
    return f"bytecode: {where} compiled (as an installed copy is)"


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def _descendants_hwm(stop: threading.Event, seen: dict[int, int], cpu: dict[int, float]) -> None:
    """Poll the peak RSS (KiB) and CPU seconds of this process's descendants (the
    forkserver's workers)."""
    while not stop.wait(0.25):
        _poll(seen, cpu)


def _poll(seen: dict[int, int], cpu: dict[int, float]) -> None:
    """One look at every descendant's peak RSS and CPU seconds so far."""
    me = os.getpid()
    tick = os.sysconf("SC_CLK_TCK")
    todo, tree = [me], []
    while todo:
        kids = _children(todo.pop())
        tree.extend(kids)
        todo.extend(kids)
    for pid in tree:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        seen[pid] = max(seen.get(pid, 0), int(line.split()[1]))
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu[pid] = max(cpu.get(pid, 0.0), (int(fields[11]) + int(fields[12])) / tick)
        except (OSError, IndexError, ValueError):
            pass


STAGES = ("decode", "attrs json", "conventions", "arrow", "store write", "events")


class _Clock:
    """Exclusive CPU time per stage, from wrapped functions (nesting subtracted), each call
    timed on its own thread's CPU clock (the store's writer thread runs the inserts)."""

    def __init__(self) -> None:
        self.spent = dict.fromkeys(STAGES, 0.0)
        self.local = threading.local()  # .stack: CPU time of nested stages, per open frame
        self.lock = threading.Lock()

    def wrap(self, stage: str, fn: Any) -> Any:
        def timed(*args: Any, **kw: Any) -> Any:
            stack = self.local.__dict__.setdefault("stack", [])
            stack.append(0.0)
            t = time.thread_time()
            try:
                return fn(*args, **kw)
            finally:
                dt = time.thread_time() - t
                inner = stack.pop()
                with self.lock:
                    self.spent[stage] += dt - inner
                if stack:
                    stack[-1] += dt

        return timed


WRAPPED = (
    # (stage, module, attribute): the functions timed, where the pipeline looks them up
    ("decode", "sponsio_audit.ingest.chunks", "_record"),
    ("attrs json", "sponsio_audit.ingest.chunks", "dumps_attrs"),
    ("conventions", "sponsio_audit.ingest.chunks", "span_facts"),
    ("arrow", "sponsio_audit.ingest.chunks", "rows_batch"),
    ("arrow", "sponsio_audit.ingest.chunks", "Columns.batches"),  # a chunk's spans and facts
    ("store write", "sponsio_audit.ingest.store", "Store._insert"),  # on the writer thread
    ("store write", "sponsio_audit.ingest.staging", "Stage.flush"),  # pass-1 events staged
    ("store write", "sponsio_audit.ingest.staging", "Stage.publish"),  # … and written
    ("arrow", "sponsio_audit.ingest.trace_tables", "_event_batch"),  # event bodies → Arrow
    ("arrow", "sponsio_audit.ingest.trace_tables", "rows_batch"),  # decisions, trace rows
    # a chunk's or pass 2's spans → grouped by trace → events (Arrow → Python in pass 2)
    ("events", "sponsio_audit.ingest.inchunk", "from_columns"),
    ("events", "sponsio_audit.ingest.chunks", "from_table"),
)
"""Every stage of ``STAGES`` must be here, and each name must exist: a missing one is an
error (the bench would otherwise report a stage as zero after a refactoring)."""


def _instrument() -> _Clock:
    """Wrap ingest's stage functions (where the pipeline looks them up) in a ``_Clock``."""
    import importlib

    clock = _Clock()
    missing = set(STAGES) - {stage for stage, _, _ in WRAPPED}
    if missing:
        raise SystemExit(f"bench/ingest.py: stages without a function: {sorted(missing)}")
    for stage, module, attr in WRAPPED:
        owner: Any = importlib.import_module(module)
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        if not hasattr(owner, name):
            raise SystemExit(f"bench/ingest.py: stage {stage!r}: {module}.{attr} does not exist")
        setattr(owner, name, clock.wrap(stage, getattr(owner, name)))
    return clock


def run_one(path: str, jobs: int, stages: bool) -> None:
    """Child process: ingest one file into a DuckDB file beside it; print JSON with the figures.

    A database file (not ``:memory:``) so the store's own data is not counted as
    pipeline memory; DuckDB's buffer pool is capped at ``MEMORY_LIMIT``.
    """
    from sponsio_audit.arrow_setup import own_process, skip_pandas
    from sponsio_audit.ingest import Store, ingest

    # Set up as `sponsio-audit scan` sets its own process up (cli.common.own_pyarrow).
    # Without skip_pandas, where pandas is installed (the spark extra), pyarrow's first
    # pa.array imports it inside the timed ingest: 0.2-0.3 s the command never spends.
    own_process()
    skip_pandas()
    clock = _instrument() if stages else _Clock()
    prestarted = _prestarted(jobs)
    store = Store.open(path + ".duckdb", memory_limit=MEMORY_LIMIT)
    seen: dict[int, int] = {}
    kids_cpu: dict[int, float] = {}
    _poll({}, kids_cpu)  # the forkserver's start, before the timed ingest: not counted
    kids_before = dict(kids_cpu)
    stop = threading.Event()
    poller = threading.Thread(target=_descendants_hwm, args=(stop, seen, kids_cpu), daemon=True)
    poller.start()
    before = resource.getrusage(resource.RUSAGE_SELF)
    t, c = time.perf_counter(), time.process_time()
    s = ingest([path], store, jobs=jobs)
    dt, cpu = time.perf_counter() - t, time.process_time() - c
    store.close()
    after = resource.getrusage(resource.RUSAGE_SELF)
    rss = after.ru_maxrss  # KiB on Linux
    stop.set()
    poller.join()
    child = max(seen.values(), default=0)
    print(
        json.dumps(
            {
                "spans": s.spans,
                "events": s.events,
                "traces": s.traces,
                "skipped": s.skipped,
                "seconds": round(dt, 2),
                "cpu_s": round(cpu, 2),
                "spans_per_s": round(s.spans / dt),
                "peak_rss_mib": round(rss / 1024),
                "worker_rss_mib": round(child / 1024),
                "workers_cpu_s": round(
                    sum(v - kids_before.get(pid, 0.0) for pid, v in kids_cpu.items()), 2
                ),
                "prestart_s": round(prestarted, 2),
                "sys_us": round((after.ru_stime - before.ru_stime) / s.spans * 1e6, 2),
                "faults": round((after.ru_minflt - before.ru_minflt) / s.spans, 3),
                "stages_us": {
                    **{k: round(v / s.spans * 1e6, 2) for k, v in clock.spent.items()},
                    "other": round((cpu - sum(clock.spent.values())) / s.spans * 1e6, 2),
                },
            }
        )
    )


def _prestarted(jobs: int) -> float:
    """With workers, start their forkserver before the timed ingest and wait until it can
    fork them, as ``scan`` starts it before it ingests (``cli.scan._prestart_workers``:
    its imports overlap the command's own imports and configuration, on the CPU the command
    leaves idle then; bench/scan.py times that whole command). Returns the seconds it took
    (0 for one job): a cost of the command's start, not of its ingest."""
    if jobs <= 1:
        return 0.0
    import multiprocessing

    from sponsio_audit.ingest import workers

    t = time.perf_counter()
    workers.prestart(jobs)
    ctx = multiprocessing.get_context("forkserver")
    probe = ctx.Process(target=int)  # forked by the server once its imports are done
    probe.start()
    probe.join()
    return time.perf_counter() - t


def _child(path: Path, jobs: int, stages: bool) -> dict[str, Any]:
    """One ``run_one`` in a fresh process (its database file removed after it)."""
    cmd = [sys.executable, __file__, "--child", str(path), "--jobs", str(jobs)]
    out = subprocess.run(
        cmd + (["--stages"] if stages else []), check=True, capture_output=True, text=True
    ).stdout
    Path(str(path) + ".duckdb").unlink(missing_ok=True)
    return dict(json.loads(out))


CEILING_CHUNKS = 20
"""Chunks (of ``chunks.CHUNK_BYTES``) each process decodes for the ``--jobs`` ceiling."""


def _own_work(path: str, fmt: str, barrier: Any, out: Any) -> None:
    """One process's share of the ceiling: a worker's per-chunk work (``decode_traced``) on
    the file's first chunks, read beforehand, timed from the moment every process is ready."""
    from sponsio_audit.arrow_setup import skip_pandas
    from sponsio_audit.ingest import chunks, inchunk

    skip_pandas()
    decoder, layout = ("otlp_json", "lines") if fmt == "jsonl" else ("otlp_proto", "delimited")
    todo = []

    def opened() -> IO[bytes]:
        return open(path, "rb")

    for c in chunks.record_chunks(decoder, layout, opened, 1, 1):
        todo.append(c)
        if len(todo) == CEILING_CHUNKS:
            break
    inchunk.decode_traced(todo[0])  # warm: first calls build caches
    barrier.wait()
    t = time.perf_counter()
    for c in todo:
        inchunk.decode_traced(c)
    out.put(time.perf_counter() - t)


def ceiling(path: Path, fmt: str, repeat: int) -> str:
    """How much faster two processes do a worker's own work than one, on this machine now.

    A ``--jobs 2`` ingest can only beat this ratio by noise: it is the same per-chunk
    work with nothing around it (no reading, no results sent back, no store); it
    falls below 2 when the two CPUs slow each other down (shared caches, memory
    bandwidth, a host that gives the VM less than two whole cores). Alone and
    paired runs alternate; the range shows how steady the machine's two cores are.
    """
    import multiprocessing
    import statistics

    ctx = multiprocessing.get_context("forkserver")
    ratios = []
    alone_s = []
    for _ in range(repeat):
        times: dict[int, float] = {}
        for n in (1, 2):
            barrier, out = ctx.Barrier(n), ctx.Queue()
            procs = [
                ctx.Process(target=_own_work, args=(str(path), fmt, barrier, out)) for _ in range(n)
            ]
            for p in procs:
                p.start()
            times[n] = max(out.get() for _ in procs)
            for p in procs:
                p.join()
        ratios.append(2 * times[1] / times[2])
        alone_s.append(times[1])
    return (
        f"{statistics.median(ratios):.2f}× (median of {repeat}: "
        f"{min(ratios):.2f}–{max(ratios):.2f}; {CEILING_CHUNKS} chunks take "
        f"{statistics.median(alone_s):.2f} s alone)"
    )


def cpu_bound(median: dict[tuple[int, int], dict[str, Any]], size: int, jobs: int) -> str:
    """The most ``jobs`` processes could gain on this machine's CPUs, from what the median
    runs used: their CPU (main process and workers) spread evenly over every CPU, with
    nothing serial, against jobs=1's wall. jobs=1 is not one core's work either: the store's
    writer thread runs beside the decoding (its CPU over its wall says how many cores it
    keeps busy). The workers' CPU is polled, so it may miss their last 0.25 s: the bound is
    generous."""
    from sponsio_audit.threads import cpus

    one, many = median[size, 1], median[size, jobs]
    spent = many["cpu_s"] + many["workers_cpu_s"]
    ncpu = cpus()
    floor = spent / ncpu
    return (
        f"jobs={jobs} used {spent:.2f} s of CPU (main {many['cpu_s']} s, workers"
        f" {many['workers_cpu_s']} s): on {ncpu} CPUs at least {floor:.2f} s, so at most"
        f" {one['seconds'] / floor:.2f}× jobs=1's {one['seconds']} s wall, which keeps"
        f" {one['cpu_s'] / one['seconds']:.2f} CPUs busy ({one['cpu_s']} s of CPU)"
    )


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median spans/s (the lower middle one of an even count)."""
    ranked = sorted(runs, key=lambda r: r["spans_per_s"])
    return ranked[(len(ranked) - 1) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="200000,1000000")
    ap.add_argument("--quick", action="store_true", help="20k spans only (a first look)")
    ap.add_argument("--formats", default="jsonl,proto")
    ap.add_argument("--jobs", default="1,2", help="worker process counts to run (0: one per CPU)")
    ap.add_argument("--repeat", type=int, default=3, help="uninstrumented runs of each")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--stages", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        run_one(a.child, int(a.jobs), a.stages)
        return
    # One OpenBLAS thread in every child (the runs, their workers, the ceiling's), as the
    # command sets for itself and its workers (cli.common.own_pyarrow): else NumPy's OpenBLAS
    # starts a thread per core that spins after start-up (1.6% of a jobs=1 run's CPU here).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    jobs_list = [int(j) for j in a.jobs.split(",")]
    if a.quick:
        a.sizes = "20000"
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print(machine_speed(), flush=True)
    print(compiled(), flush=True)
    with tempfile.TemporaryDirectory() as d:
        for fmt in a.formats.split(","):
            rss: dict[int, dict[int, int]] = {j: {} for j in jobs_list}
            rate: dict[tuple[int, int], int] = {}
            median: dict[tuple[int, int], dict[str, Any]] = {}
            for size in (int(x) for x in a.sizes.split(",")):
                path = generate(Path(d), size, fmt)
                mb = path.stat().st_size / 1e6
                runs: dict[int, list[dict[str, Any]]] = {j: [] for j in jobs_list}
                for _ in range(a.repeat):  # alternated: a drift falls on every jobs value
                    for jobs in jobs_list:
                        runs[jobs].append(_child(path, jobs, stages=False))
                for jobs in jobs_list:
                    res = _median_run(runs[jobs])
                    rates = sorted(r["spans_per_s"] for r in runs[jobs])
                    timed = _child(path, jobs, stages=True)
                    rss[jobs][size] = max(res["peak_rss_mib"], res["worker_rss_mib"])
                    rate[size, jobs] = res["spans_per_s"]
                    median[size, jobs] = res
                    workers = (
                        f", largest worker {res['worker_rss_mib']} MiB, workers' CPU"
                        f" {res['workers_cpu_s']} s (polled every 0.25 s); their forkserver"
                        f" started before the timed ingest, as scan starts it, in"
                        f" {res['prestart_s']} s"
                        if jobs != 1
                        else ""
                    )
                    spread = (
                        f" (median of {len(rates)}: {rates[0]:,}–{rates[-1]:,})"
                        if len(rates) > 1
                        else ""
                    )
                    print(
                        f"{fmt:5} {size:>9,} spans ({mb:,.0f} MB) jobs={jobs}: "
                        f"{res['spans_per_s']:>9,} spans/s{spread}, {res['seconds']} s wall, "
                        f"main process CPU {res['cpu_s']} s ({res['sys_us']} µs/span in the "
                        f"kernel, {res['faults']} page faults/span), "
                        f"peak RSS {res['peak_rss_mib']} MiB{workers}, "
                        f"events {res['events']:,}, traces {res['traces']:,}",
                        flush=True,
                    )
                    where = "main process only" if jobs != 1 else "CPU"
                    per = ", ".join(f"{k} {v}" for k, v in timed["stages_us"].items())
                    print(
                        f"      µs/span ({where}, instrumented run: {timed['cpu_s']} s CPU): {per}",
                        flush=True,
                    )
                if 2 in jobs_list and (size, 1) in rate:
                    print(
                        f"{fmt:5} {size:>9,} spans: two processes doing a worker's own work"
                        f" at once against one: {ceiling(path, fmt, max(a.repeat, 5))}: the"
                        " ceiling of jobs=2 / jobs=1 here",
                        flush=True,
                    )
                path.unlink()
                for jobs in jobs_list:
                    if jobs != 1 and (size, 1) in rate:
                        print(
                            f"{fmt:5} {size:>9,} spans: jobs={jobs} / jobs=1 "
                            f"{rate[size, jobs] / rate[size, 1]:.2f}× spans/s (wall)",
                            flush=True,
                        )
                        print(f"{fmt:5} {size:>9,} spans: {cpu_bound(median, size, jobs)}")
            for jobs, by_size in rss.items():
                if len(by_size) > 1:
                    lo, hi = min(by_size), max(by_size)
                    print(
                        f"{fmt:5} jobs={jobs} RSS growth {lo:,} → {hi:,} spans: "
                        f"{by_size[hi] / by_size[lo]:.2f}×"
                    )
    print(f"at the end: {machine_speed()}", flush=True)


if __name__ == "__main__":
    main()
