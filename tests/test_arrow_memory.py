"""The Arrow memory pool (``arrow_memory``): jemalloc by default, the user's choice when made.

Each case runs in a fresh interpreter: pyarrow reads ``ARROW_DEFAULT_MEMORY_POOL``
once, when it is first imported.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest

PROBE = (
    "import pyarrow as pa; from sponsio_audit.arrow_memory import POOL, own_process; "
    "a = POOL.backend_name; own_process(); print(a, pa.default_memory_pool().backend_name)"
)


def _backends(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


@pytest.mark.parametrize("chosen", ["system", "mimalloc"])
def test_a_pool_the_user_chose_is_used(chosen: str) -> None:
    # ARROW_DEFAULT_MEMORY_POOL is pyarrow's own setting: a command must not override it
    assert _backends(ARROW_DEFAULT_MEMORY_POOL=chosen) == [chosen, chosen]


def test_jemalloc_by_default_and_for_the_whole_command() -> None:
    expected = "jemalloc" if _has_jemalloc() else pa.default_memory_pool().backend_name
    assert _backends() == [expected, expected]
