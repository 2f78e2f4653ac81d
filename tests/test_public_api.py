"""The public face of ``sponsio_audit``: exactly these names, each resolving, imported lazily."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

import sponsio_audit
from sponsio_audit.api import AuditResult, audit
from sponsio_audit.config import load_config
from sponsio_audit.evaluation import AuditTables, evaluate
from sponsio_audit.guard import Guard
from sponsio_audit.trace_batches import whole_traces

EXPECTED = [
    "AuditResult",
    "AuditTables",
    "Guard",
    "__version__",
    "audit",
    "evaluate",
    "load_config",
    "whole_traces",
]
"""The public API; changing it is a decision, made here on purpose (issue 17 added the
pure engine entry ``evaluate`` / ``AuditTables`` and ``whole_traces``)."""


def test_all_is_the_expected_list() -> None:
    assert sorted(sponsio_audit.__all__) == EXPECTED
    assert len(set(sponsio_audit.__all__)) == len(sponsio_audit.__all__)


def test_each_name_resolves_to_its_stage_object() -> None:
    assert sponsio_audit.audit is audit
    assert sponsio_audit.AuditResult is AuditResult
    assert sponsio_audit.Guard is Guard
    assert sponsio_audit.load_config is load_config
    assert sponsio_audit.evaluate is evaluate
    assert sponsio_audit.AuditTables is AuditTables
    assert sponsio_audit.whole_traces is whole_traces
    for name in EXPECTED:
        assert getattr(sponsio_audit, name) is not None
        assert name in dir(sponsio_audit)


def test_version_is_the_installed_distributions() -> None:
    assert sponsio_audit.__version__ == importlib.metadata.version("sponsio-audit")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sponsio_audit.nope  # noqa: B018


def test_import_loads_no_stage() -> None:
    """``import sponsio_audit`` loads none of its stages, nor DuckDB or Arrow, until a name is
    used (only ``sponsio_audit.lazy``, the face's stdlib-only helper)."""
    code = (
        "import sys, sponsio_audit\n"
        "print(sorted(m for m in sys.modules if m.startswith('sponsio_audit.')"
        " and m != 'sponsio_audit.lazy' or m in ('duckdb', 'pyarrow', 'numpy')))\n"
        "sponsio_audit.load_config\n"
        "print('sponsio_audit.config' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "True"]
