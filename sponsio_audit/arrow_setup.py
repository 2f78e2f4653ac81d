"""How the package sets pyarrow up: the pool its arrays are built in, and the processes it owns.

``POOL`` is jemalloc's where pyarrow has it. pyarrow's default pool, mimalloc,
reserves a 1 GiB arena marked for transparent huge pages
(``madvise(MADV_HUGEPAGE)``), so each first touch there zeroes 2 MiB and each
purge gives it back. Where fresh memory is slow (a VM whose freed pages go back
to the host), that was 0.5 s of kernel time in a 4 s ingest of 200k spans; with
this pool ingest ran 15-20% faster (``bench/ingest.py``). The pool is passed per
call, so a program that embeds the package keeps its own default. A user who
sets ``ARROW_DEFAULT_MEMORY_POOL`` chose a pool: then it is used.

In a process the package owns, ``own_process`` also makes ``POOL`` the default
pool, for the compute kernels (the commands), and ``skip_pandas`` spares
pyarrow's look for pandas (the commands outside Spark, and ingest workers).
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from typing import Any

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


class _NoPandas(importlib.abc.MetaPathFinder):
    """An import finder that refuses pandas (only during ``skip_pandas``)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pyarrow is handed no pandas objects in this process")
        return None


def skip_pandas() -> None:
    """Make pyarrow's one look for pandas now, while pandas cannot be imported, so that
    pyarrow takes it as absent: for a process that never hands pyarrow pandas objects.

    pyarrow imports pandas, when installed, on its first ``pa.array`` of a list, only
    to check whether the list is a pandas object: 0.2-0.3 s of CPU and ~34 MiB. It
    imports pandas anyway when something asks for it (``to_pandas``, ``from_pandas``);
    only ``pa.array``'s look is skipped. Not for Spark's driver, whose pyspark hands
    pyarrow pandas objects.
    """
    if "pandas" in sys.modules:
        return
    block = _NoPandas()
    sys.meta_path.insert(0, block)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(block)
