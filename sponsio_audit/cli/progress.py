"""A rich progress bar on stderr (files, bytes, spans, rate), shown only on a terminal.

Piped or redirected stderr, ``-q`` and ``--silent`` get no bar at all, so
a CI log holds only the summary line.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

Tick = Callable[[str, int], None]
"""Called after each file: (path, spans so far)."""


def inputs(paths: list[Path]) -> list[tuple[str, int]]:
    """Every input file under ``paths`` with its size (``-`` for stdin has size 0)."""
    from sponsio_audit.ingest.files import walk

    out = []
    for p in walk([str(x) for x in paths]):
        try:
            size = os.path.getsize(p) if p != "-" else 0
        except OSError:
            size = 0
        out.append((p, size))
    return out


def wanted(quiet: bool) -> bool:
    """Whether a bar should show: stderr is a terminal and the run is not quiet."""
    return not quiet and sys.stderr.isatty()


@contextmanager
def bar(files: list[tuple[str, int]], show: bool) -> Iterator[tuple[Tick, Callable[[str], None]]]:
    """A per-file ``tick`` and a stage setter; both do nothing when ``show`` is false."""
    if not show:
        yield (lambda _p, _n: None), (lambda _s: None)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    sizes = dict(files)
    total = sum(sizes.values()) or 1
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[done]}/{task.fields[files]} files"),
        DownloadColumn(),
        TextColumn("{task.fields[spans]} spans, {task.fields[rate]} spans/s"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    start = time.monotonic()
    state: dict[str, Any] = {"done": 0, "bytes": 0}
    with progress:
        task = progress.add_task("reading", total=total, done=0, files=len(files), spans=0, rate=0)

        def tick(path: str, spans: int) -> None:
            state["done"] += 1
            state["bytes"] += sizes.get(path, 0)
            rate = int(spans / max(time.monotonic() - start, 1e-3))
            progress.update(
                task, completed=state["bytes"], done=state["done"], spans=spans, rate=rate
            )

        def stage(name: str) -> None:
            progress.update(task, description=name)

        yield tick, stage
