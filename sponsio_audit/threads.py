"""How many threads the columnar audit uses, an ordered map over them, and one task started
on a thread of its own (``background``).

NumPy and Arrow release the GIL in their kernels, so grounding a table's
atoms and evaluating its contracts on a few threads keeps more than one core
busy. Every task reads shared arrays and writes only its own, so the result
is the same for any number of threads (``tests/engine/test_threads.py``).
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

MAX_THREADS = 4
"""Most threads ``auto`` picks: past this, the audit of one table gains little (its
tasks are ~20 contracts and their atoms)."""
MIN_ROWS = 500_000
"""Fewest events for which ``auto`` picks more than one thread. Below, the kernels are
short and the threads mostly wait for the GIL: on 2 cores ``bench/evaluate.py`` ran
100k-200k events slower on two threads than on one, 500k 1.2x faster, 1M 1.35-1.4x."""

T = TypeVar("T")
R = TypeVar("R")


def cpus() -> int:
    """The CPUs this process may run on (its affinity; all CPUs where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def resolve(threads: int, rows: int) -> int:
    """``threads`` as asked (0: auto, the CPUs at most ``MAX_THREADS``, one below
    ``MIN_ROWS`` events)."""
    if threads < 0:
        raise ValueError(f"threads must be 0 (auto) or more, not {threads}")
    if threads:
        return threads
    return 1 if rows < MIN_ROWS else max(1, min(cpus(), MAX_THREADS))


def ordered_map(fn: Callable[[T], R], items: Iterable[T], threads: int) -> list[R]:
    """``[fn(x) for x in items]``, on up to ``threads`` threads (the caller's one when
    that is 1 or there is one item); an exception of ``fn`` is raised here, the first
    one in item order. Each call runs in a copy of the caller's context variables."""
    todo = list(items)
    if threads <= 1 or len(todo) <= 1:
        return [fn(x) for x in todo]
    context = contextvars.copy_context()  # the run's settings (regexes.time_limit) go along

    def task(x: T) -> R:
        return context.copy().run(fn, x)

    with ThreadPoolExecutor(min(threads, len(todo)), thread_name_prefix="sponsio-audit") as pool:
        return list(pool.map(task, todo))


def background(name: str, fn: Callable[..., R], *args: Any) -> Future[R]:
    """``fn(*args)`` started on a thread of its own (named ``sponsio-audit-<name>``), in a
    copy of the caller's context variables; its result or exception comes from the future.
    For work that releases the GIL (hashing, an Arrow sort) beside the caller's own."""
    context = contextvars.copy_context()
    pool = ThreadPoolExecutor(1, thread_name_prefix=f"sponsio-audit-{name}")
    try:
        return pool.submit(context.run, fn, *args)
    finally:
        pool.shutdown(wait=False)  # the thread ends with the task
