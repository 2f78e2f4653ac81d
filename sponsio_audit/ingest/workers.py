"""``Workers``: an ordered, bounded map over worker processes (``--jobs``), or inline for one job.

Ingest's per-record work (decoding, conventions, events of a trace) is pure and
independent between chunks, so it can run in other processes while the main
process reads files and writes the store. Results come back in submission
order, through a ``Spool`` (shared-memory files) when they are large, and at
most ``2 × jobs`` chunks are in flight, so memory stays bounded by the
chunk size whatever the corpus size (``Pool.imap`` would read its whole input
ahead). Workers are started with ``forkserver`` where available (never
plain ``fork``: the parent holds DuckDB and Arrow threads), else ``spawn``.

The pool is a ``ProcessPoolExecutor``: ``multiprocessing.Pool``'s worker-handler
thread polls forkserver workers in a loop, which cost this process about a
second of CPU per 100k spans (measured), as much as the decoding it handed off.

A worker starts by telling pyarrow that pandas is absent (``_start_worker``,
``arrow_setup.skip_pandas``): pyarrow imports pandas, when installed, on its
first ``pa.array`` of a list, to check whether the list is a pandas object; in a
worker, which only decodes chunks, that import cost 0.27–0.32 s of CPU and ~34
MiB each, for nothing.

A worker can die under an item (the system's out-of-memory killer, a crash in
a C parser): the pool breaks, and every item in flight fails with it. ``map``
then starts a new pool and runs those items again one at a time, so that an
item that kills a worker alone is known: ``lost`` says what it becomes (ingest:
its records listed as skipped, with the reason), else ``WorkerDied`` is raised.
The other items, and the rest of the input, are mapped as before.

Where worker processes cannot run at all (no semaphores: a read-only or missing
``/dev/shm``; no process left to fork), ``map`` maps in this process instead, as with
one job: the results do not depend on where they are computed. ``unavailable`` says
why, for a caller that wants to tell its user.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from types import TracebackType
from typing import Any, TypeVar

from sponsio_audit.arrow_setup import skip_pandas
from sponsio_audit.ingest.spool import Spool, land, shipped
from sponsio_audit.threads import cpus

T = TypeVar("T")
R = TypeVar("R")


AUTO_BYTES = 64 << 20
"""With ``jobs=0`` (auto), inputs smaller than this are read in this process: a
worker pool costs about half a second to start."""

SPARE_CPUS = 1.5
"""With ``jobs=0``, workers only when the CPUs left idle (CPUs − 1-minute load
average) reach this: workers cost about as much CPU as the work they take over
(measured: 200k protobuf spans 10.3 s CPU in one process, 3.3 s main + 7.2 s
workers with 2), so they are faster only on cores that would otherwise idle;
on a busy machine they were slower (182 MB: 8.7 s with 2 workers, 6.2 s with one)."""


def resolve_jobs(jobs: int, input_bytes: int | None = None, load: float | None = None) -> int:
    """``jobs`` as a process count; 0 is auto: for inputs of ``AUTO_BYTES`` or more
    (``input_bytes``; None when unknown, e.g. stdin, counts as small), one per idle CPU
    when at least ``SPARE_CPUS`` are idle (``load``: the 1-minute load average, read
    from the OS when None), else 1."""
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (auto) or more, not {jobs}")
    if jobs:
        return jobs
    if input_bytes is None or input_bytes < AUTO_BYTES:
        return 1
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    idle = cpus() - load
    return min(cpus(), int(idle + 0.5)) if idle >= SPARE_CPUS else 1


START_INLINE = True
"""``Workers``' default: map items in this process until the workers are up (``map``)."""


PRELOAD = "sponsio_audit.ingest.inchunk"
"""Imported once by the forkserver, so each worker forked from it starts with ingest's
modules (pyarrow, msgspec, the conventions) loaded: 0.27-0.41 s of CPU per worker less."""


def _context() -> Any:
    """The start method's context: forkserver (preloading ``PRELOAD``) where available, else
    spawn."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload([PRELOAD])
    return ctx


def prestart(jobs: int) -> None:
    """Start the forkserver now when ``jobs`` workers will run (more than one), so that its
    start and ``PRELOAD`` imports (0.3-0.4 s) overlap what the caller does before its
    ingest (a command's own imports and configuration); ``Workers`` then forks warm
    workers from it. Only a process that owns its multiprocessing set-up (a command)
    should call it: the forkserver is process-wide. The forkserver, and every worker
    forked from it, is deaf to Ctrl-C from its first instruction (``_deaf_children``)."""
    if jobs > 1 and _context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with _deaf_children():
            forkserver.ensure_running()


@contextmanager
def _deaf_children() -> Iterator[None]:
    """Processes started inside (the forkserver, or a worker where there is none) have SIGINT
    blocked for good, which a terminal's Ctrl-C sends to every process of the command: the
    main process alone handles it and stops the pool. The forkserver ignores SIGINT itself
    only after its ``PRELOAD`` imports (0.3-0.4 s), and a Ctrl-C before printed its
    ``KeyboardInterrupt`` traceback under the main process's one-line message. A signal mask
    is kept through ``fork`` and ``exec`` (as multiprocessing's resource tracker is started)
    and is the calling thread's own: this process still gets its Ctrl-C (in another thread,
    or here once the mask is back), and a command's helper thread may call it (only the main
    thread may set a handler). Where there are no signal masks (Windows), nothing is done."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()  # first: its start unblocks SIGINT in this thread after
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def cannot_start() -> str | None:
    """Why worker processes cannot run here, or None: a pool needs POSIX semaphores, which
    a read-only or missing ``/dev/shm`` refuses (checked by making one, as a pool would)."""
    try:
        _context().Lock()
    except OSError as e:
        return f"{e.strerror or e} (a worker pool needs semaphores, in /dev/shm here)"
    return None


def _ready() -> None:
    """A task that does nothing: submitted at start, it makes the pool start a worker."""


def _start_worker() -> None:
    """Worker start-up: a worker hands pyarrow no pandas objects (``arrow_setup.skip_pandas``),
    and leaves Ctrl-C to the main process, which stops the pool (a terminal sends it to every
    process of the command: a worker waiting for work died of it, with a traceback, and the
    main process took the broken pool for a worker that died under a chunk)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    skip_pandas()


class WorkerDied(RuntimeError):
    """A worker process died on an item when it ran alone in a fresh pool; the message
    says how (``death``)."""


def death(procs: Iterable[Any]) -> str:
    """How a broken pool's worker ended, as a phrase, from the pool's processes once joined:
    the signal that killed it, or its exit code; the workers the pool itself stopped after
    the break (SIGTERM) are left out."""
    codes = {p.exitcode for p in procs if getattr(p, "exitcode", None) not in (None, 0)}
    codes.discard(-signal.SIGTERM)
    for code in sorted(codes, key=abs):
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            hint = "; out of memory?" if -code == signal.SIGKILL else ""
            return f"killed by signal {name}{hint}"
        return f"exited with code {code}"
    return "ended abruptly"


Lost = Callable[[Any, str], Any]
"""``lost(item, reason)``: the result that stands for an item a worker died on (``map``)."""


class Workers:
    """A process pool of ``jobs`` workers with an ordered, bounded ``map`` (inline when 1)."""

    def __init__(
        self,
        jobs: int = 1,
        start_inline: bool | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        """``warn(line)`` is told when a worker died and the items it had were mapped again
        (nothing is lost then, but the user may want to know: memory, most often)."""
        if jobs < 1:
            raise ValueError(f"Workers needs 1 or more jobs, not {jobs} (see resolve_jobs)")
        self.jobs = jobs
        self.start_inline = START_INLINE if start_inline is None else start_inline
        self._pool: ProcessPoolExecutor | None = None
        self._spool: Spool | None = None
        self._starting: threading.Thread | None = None
        self._failed: BaseException | None = None
        self._warn = warn
        self.unavailable: str | None = None
        """Why the workers could not start (then ``map`` maps in this process), or None."""

    def __enter__(self) -> Workers:
        """With more than one job, start the workers now, on a thread: the forkserver's
        start and imports then overlap the caller's first steps (reading its input)."""
        if self.jobs > 1:
            self._starting = threading.Thread(target=self._warm, daemon=True)
            self._starting.start()
        return self

    def _warm(self) -> None:
        try:
            self._fill()
        except (OSError, BrokenProcessPool) as e:  # no semaphores, no fork: no workers here
            self._give_up(e)
        except BaseException as e:  # raised again by the first map
            self._failed = e

    def _give_up(self, e: BaseException) -> None:
        """No worker can be started (any more): this process maps the rest (``unavailable``)."""
        self.unavailable = f"{type(e).__name__}: {e}"
        self._close_pool()
        if self._warn is not None:
            self._warn(f"worker processes cannot be started ({self.unavailable}); the rest is "
                       "read in this process")  # fmt: skip

    def _close_pool(self, cancel: bool = True) -> None:
        """Stop the pool, if any (the next ``_start`` makes a new one); ``cancel``: drop the
        items not yet started."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=cancel)
            self._pool = None

    def _fill(self) -> None:
        """Start (or restart) the pool and wait until each of its workers is up. A pool
        that has all its workers starts no other: the executor of Python 3.11 can hang for
        good when a worker is started while it stops the others after one died."""
        with _deaf_children():  # the forkserver, if not running yet, and the workers
            pool, _ = self._start()
            futures = [pool.submit(_ready) for _ in range(self.jobs)]
        for f in futures:
            f.result()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._await_start()
        self._close_pool(cancel=et is not None)
        if self._spool is not None:
            self._spool.close()
            self._spool = None

    def _warming(self) -> bool:
        """Whether the start ``__enter__`` began is still under way."""
        return self.start_inline and self._starting is not None and self._starting.is_alive()

    def _await_start(self) -> None:
        """Wait for the start ``__enter__`` began, if any."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None

    def _started(self) -> bool:
        """Wait for the workers' start; False when they cannot run here (``unavailable``)."""
        self._await_start()
        if self._failed is not None:
            raise self._failed
        if self.unavailable is None and self._pool is None:  # not started by __enter__
            self._warm()
            if self._failed is not None:
                raise self._failed
        return self.unavailable is None

    def _start(self) -> tuple[ProcessPoolExecutor, Spool]:
        if self._spool is None:
            self._spool = Spool.open()
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.jobs, mp_context=_context(), initializer=_start_worker
            )
        return self._pool, self._spool

    def _restart(self) -> str:
        """Replace a broken pool by a new one; how its worker died (``death``)."""
        # the executor's own record of its processes (it drops it at shutdown), if it has one
        procs = list((getattr(self._pool, "_processes", None) or {}).values())
        self._close_pool()  # the next ``_submit`` starts a new one
        return death(procs)

    def _submit(self, fn: Callable[[T], R], item: T) -> Future[Any]:
        """``fn(item)`` submitted; a pool that broke already gives a future that failed so.
        Where no worker can be started any more (``OSError``: no process or semaphore left,
        after a death), ``fn(item)`` runs here, as every later item does (``_give_up``)."""
        done: Future[Any]
        if self.unavailable is None:
            try:
                pool, spool = self._start()
                return pool.submit(shipped, fn, spool.directory, item)
            except BrokenProcessPool as e:
                done = Future()
                done.set_exception(e)
                return done
            except OSError as e:
                self._give_up(e)
        done = Future()
        try:
            done.set_result(fn(item))
        except Exception as e:  # raised where the result is asked for, as from a worker
            done.set_exception(e)
        return done

    def _landed(
        self, fn: Callable[[T], R], head: tuple[T, Future[Any]], rest: deque[tuple[T, Future[Any]]],
        lost: Lost | None,
    ) -> Iterator[R]:  # fmt: skip
        """The result of ``head``; when its worker died, those of ``head`` and every item
        of ``rest`` (emptied), each run again alone in a new pool (``lost`` or
        ``WorkerDied`` for one that kills a worker again)."""
        try:
            yield land(head[1].result())
            return
        except BrokenProcessPool:
            pass
        again = [head[0], *(item for item, _ in rest)]
        rest.clear()
        how = self._restart()
        if self._warn is not None:
            self._warn(
                f"a worker process died ({how}); the {len(again)} chunk(s) in flight were "
                "read again, one at a time"
            )
        for item in again:
            try:
                yield land(self._submit(fn, item).result())
            except BrokenProcessPool:
                how = self._restart()
                if lost is None:
                    raise WorkerDied(
                        f"a worker process died ({how}), twice on the same input, the second "
                        "time alone; run with --jobs 1 to read it in this process"
                    ) from None
                yield lost(item, how)
        if self.unavailable is None:
            try:
                self._fill()
            except (OSError, BrokenProcessPool) as e:
                self._give_up(e)

    def map(
        self, fn: Callable[[T], R], items: Iterable[T], lost: Lost | None = None
    ) -> Iterator[R]:
        """``fn`` over ``items``, results in order; ``fn`` must be a module-level function.

        When iterating ``items`` raises, the results of the items before are
        yielded first, then the error is raised (as the inline ``map`` does). Until the
        workers are up (``__enter__`` starts them on a thread), the items are mapped in this
        process (``start_inline``): a pool takes 0.26-0.33 s to start without ``prestart``,
        in which this process, idle otherwise, decodes two or three 10k-span chunks.
        An item a worker dies on twice (see the module doc) gives ``lost(item, how)``, or
        raises ``WorkerDied`` without ``lost``.
        """
        if self.jobs == 1 or self.unavailable is not None:
            yield from map(fn, items)
            return
        it = iter(items)
        while self._warming():  # the workers are not up yet: this process takes the items
            try:
                item = next(it)
            except StopIteration:
                return
            yield fn(item)
        if not self._started():  # no workers can run here: this process takes the rest
            yield from map(fn, it)
            return
        pending: deque[tuple[T, Future[Any]]] = deque()
        while True:
            try:
                item = next(it)
            except StopIteration:
                break
            except BaseException:  # the input failed: hand over what was read before it
                while pending:
                    yield from self._landed(fn, pending.popleft(), pending, lost)
                raise
            pending.append((item, self._submit(fn, item)))
            if len(pending) >= 2 * self.jobs:
                yield from self._landed(fn, pending.popleft(), pending, lost)
        while pending:
            yield from self._landed(fn, pending.popleft(), pending, lost)
