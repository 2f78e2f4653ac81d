"""sponsio-audit: the public entry points, imported on first use (``import sponsio_audit``
stays cheap for the guard and the CLI)."""

from __future__ import annotations

from typing import Any

_PUBLIC = {
    "evaluate": "sponsio_audit.evaluation",
    "AuditTables": "sponsio_audit.evaluation",
    "whole_traces": "sponsio_audit.trace_batches",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        import importlib

        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'sponsio_audit' has no attribute {name!r}")
