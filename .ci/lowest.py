"""Print pip constraints pinning every runtime dependency of pyproject.toml to its lower bound.

``.ci/run`` installs the package with them on Python 3.10 and runs tests there, so the
bounds pyproject promises are the versions some run has used (at 2026-12-08 six of them
did not hold: duckdb 1.0 lacked ``to_arrow_reader``, pyarrow 15 ``RecordBatch.set_column``
and string_view casts, opentelemetry-proto 1.25 the log record's ``event_name``, orjson
3.9.0 its depth limit, typer 0.26.0 options' environment variables; regex 2023.10 was no
release).
Run with Python 3.11 or later (``tomllib``), or with ``tomli`` installed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as the tomli package
    import tomli as tomllib

BOUND = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)")
"""``name>=version`` at the start of a requirement (further clauses such as ``<0.27`` kept
out: the pin is the lower bound)."""


def pins(pyproject: Path) -> list[str]:
    """``name==lower`` for each dependency of ``[project]`` that has a lower bound."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    out = []
    for req in project["dependencies"]:
        m = BOUND.match(req)
        if m is None:
            raise SystemExit(f"{pyproject}: dependency {req!r} has no lower bound (name>=version)")
        out.append(f"{m.group(1)}=={m.group(2)}")
    return out


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    print("\n".join(pins(root / "pyproject.toml")))
