"""``Writer``: the thread a loading store's inserts run on, while ingest decodes the next rows.

DuckDB releases the GIL while it appends Arrow rows and commits, so on a second
core the writing overlaps the decoding (200k JSON-lines spans into a file, one
process, alternated with the code before: 49–51k → 56–59k spans/s). The calls
run one at a time, in the order they were put; at most ``DEPTH`` wait, so the
batches alive beside the decoder stay bounded. The first error is raised in the
calling thread, at the next ``put`` or ``drain``; the calls after it are not run.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

DEPTH = 1
"""Calls waiting beside the one running: one batch ahead is enough to keep DuckDB busy."""

_STOP = None


class Writer:
    """One thread running the calls ``put`` hands it, in order (see module doc)."""

    def __init__(self) -> None:
        self._calls: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = queue.Queue(
            DEPTH
        )
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="sponsio-audit-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            call = self._calls.get()
            try:
                if call is _STOP:
                    return
                if self._error is None:
                    fn, args = call
                    fn(*args)
            except BaseException as e:  # handed to the caller: nothing is lost in this thread
                self._error = e
            finally:
                self._calls.task_done()

    def _raise(self) -> None:
        if self._error is not None:
            e, self._error = self._error, None
            raise e

    def put(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` after the calls put before (raise an earlier call's error)."""
        self._raise()
        self._calls.put((fn, args))

    def drain(self) -> None:
        """Wait until every call put has run; raise the first error one of them raised."""
        self._calls.join()
        self._raise()

    def stop(self) -> None:
        """Let the calls put run, then end the thread (an error is left unraised)."""
        self._calls.put(_STOP)
        self._thread.join()
