"""sponsio-audit: audit recorded LLM-agent traces against temporal-logic contracts.

The public API is this face: ``audit`` and ``AuditResult`` (``api``),
``evaluate`` and ``AuditTables`` (``evaluation``, the pure engine entry),
``whole_traces`` (``trace_batches``), ``Guard`` (``guard``),
``load_config`` (``config``) and ``__version__``.
Each name is imported on first use (module ``__getattr__``), so that
``import sponsio_audit`` stays cheap and loads no stage; modules inside
the package import from the stages, never from this face.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sponsio_audit.lazy import exports

__version__ = "0.1.0"

__all__ = [
    "AuditResult",
    "AuditTables",
    "Guard",
    "__version__",
    "audit",
    "evaluate",
    "load_config",
    "whole_traces",
]

_HOMES = {
    "AuditResult": "sponsio_audit.api",
    "AuditTables": "sponsio_audit.evaluation",
    "Guard": "sponsio_audit.guard",
    "audit": "sponsio_audit.api",
    "evaluate": "sponsio_audit.evaluation",
    "load_config": "sponsio_audit.config",
    "whole_traces": "sponsio_audit.trace_batches",
}
"""Where each lazily exported name lives."""

if TYPE_CHECKING:
    from sponsio_audit.api import AuditResult, audit
    from sponsio_audit.config import load_config
    from sponsio_audit.evaluation import AuditTables, evaluate
    from sponsio_audit.guard import Guard
    from sponsio_audit.trace_batches import whole_traces


__getattr__, __dir__ = exports(__name__, _HOMES)
