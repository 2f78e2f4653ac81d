"""The Arrow memory pool the package builds its large arrays in: jemalloc where pyarrow has it.

pyarrow's default pool, mimalloc, reserves a 1 GiB arena marked for transparent
huge pages (``madvise(MADV_HUGEPAGE)``), so each first touch there zeroes 2 MiB
and each purge gives it back. Where fresh memory is slow (a VM whose freed pages
go back to the host), that was 0.5 s of kernel time in a 4 s ingest of 200k
spans; with this pool ingest ran 15-20% faster (``bench/ingest.py``). The pool is
passed per call, so a program that embeds the package keeps its own default.
A user who sets ``ARROW_DEFAULT_MEMORY_POOL`` chose a pool: then it is used.
"""

from __future__ import annotations

import os

import pyarrow as pa


def _pool() -> pa.MemoryPool:
    """jemalloc's pool, unless the user chose one or this pyarrow lacks jemalloc."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return pa.default_memory_pool()
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc (Windows wheels)
        return pa.default_memory_pool()


POOL: pa.MemoryPool = _pool()
"""The pool of ``pa.array`` calls that build row data (ingest's columns, report tables)."""


def own_process() -> None:
    """Make ``POOL`` pyarrow's default pool, in a process the package owns (a command), so
    that compute kernels, which take no pool here, allocate there too."""
    pa.set_memory_pool(POOL)
