"""The hook-side guard (Model A): enforce contracts on tool calls as they happen.

``Guard`` decides before each call (``guard_before``), completes the event
after it (``guard_after``) and reports open obligations at the end
(``finish``); ``Guard.guarded`` wraps tool functions. See ``guard`` for the
semantics, ``strategies`` for what each contract strategy does.
"""

from sponsio_audit.guard.guard import Guard
from sponsio_audit.guard.otlp_export import OtlpHttpExporter
from sponsio_audit.guard.strategies import Decision, ToolBlocked, Violation
from sponsio_audit.redact import looks_secret, redact_args

__all__ = [
    "Decision",
    "Guard",
    "OtlpHttpExporter",
    "ToolBlocked",
    "Violation",
    "looks_secret",
    "redact_args",
]
