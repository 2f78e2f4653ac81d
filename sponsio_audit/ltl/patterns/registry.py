"""The pattern registry: every §6 pattern and §6.1 Sponsio name, read-only.

``sponsio-audit patterns`` and the YAML resolver both read ``registry()``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from sponsio_audit.ltl.patterns.core import CORE
from sponsio_audit.ltl.patterns.spec import PatternResult, PatternSpec
from sponsio_audit.ltl.patterns.sponsio import SPECS as SPONSIO


@functools.cache
def registry() -> Mapping[str, PatternSpec]:
    """Every pattern name (§6 and the §6.1 Sponsio names), read-only."""
    table = {s.name: s for s in (*CORE, *SPONSIO)}
    return MappingProxyType(table)


def lookup(name: str) -> PatternSpec | None:
    """The pattern registered under ``name``, or None."""
    return registry().get(name)


def build(name: str, args: Any = None, desc: str | None = None) -> PatternResult:
    """Build pattern ``name`` from YAML-style ``args``; KeyError when the name is unknown."""
    spec = lookup(name)
    if spec is None:
        raise KeyError(name)
    return spec.build(args, desc)
