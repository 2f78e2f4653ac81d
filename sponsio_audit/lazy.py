"""Names of a package face imported on first use (PEP 562), so that importing it stays cheap.

``sponsio_audit`` (the public face) and ``sponsio_audit.ingest`` (whose workers
must not load DuckDB) each map their names to the modules that define them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def exports(
    module: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` of ``module``, whose names ``homes`` maps to the
    modules they are imported from when first asked for."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(import_module(home), name)

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[module]), *homes})

    return getattr_, dir_
