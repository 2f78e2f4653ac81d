"""Every package the tool imports is one it declares (pyproject.toml), so a fresh
``pip install .`` runs it: ``import click`` (installed here only because the test-only
Sponsio needs it) would break every command of a user's install."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import distributions, packages_distributions, requires
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPARK = ("spark", "cli_spark.py")  # the [spark] extra's modules
LATER_STDLIB = {"tomllib"}
"""Standard library from Python 3.11, imported only where present (config.discovery)."""


def _declared(extra: str | None) -> set[str]:
    """Distributions the installed metadata requires (with ``extra``'s ones too)."""
    out = set()
    for req in requires("sponsio-audit") or []:
        name, _, marker = req.partition(";")
        if "extra ==" in marker and (extra is None or f'"{extra}"' not in marker):
            continue
        out.add(re.split(r"[ <>=!~\[(]", name.strip(), maxsplit=1)[0].lower().replace("_", "-"))
    return out


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out - set(sys.stdlib_module_names) - LATER_STDLIB - {"sponsio_audit", "__future__"}


def _owners() -> dict[str, set[str]]:
    """Top-level import name -> distributions that ship it. Python 3.10's
    ``packages_distributions`` reads only ``top_level.txt``, which wheels of namespace
    packages (opentelemetry, google) lack: their installed files say it too."""
    out: dict[str, set[str]] = {k: set(v) for k, v in packages_distributions().items()}
    for dist in distributions():
        for f in dist.files or []:
            top = f.parts[0] if f.parts else ""
            if top.endswith((".dist-info", ".data")) or top in ("..", "__pycache__"):
                continue
            name = top.removesuffix(".py") if len(f.parts) == 1 else top
            if name.isidentifier():
                out.setdefault(name, set()).add(dist.metadata["Name"])
    return out


def test_every_import_is_a_declared_dependency() -> None:
    base, spark = _declared(None), _declared("spark")
    dists = _owners()
    wrong = []
    for path in sorted((ROOT / "sponsio_audit").rglob("*.py")):
        rel = path.relative_to(ROOT / "sponsio_audit").parts
        allowed = spark if rel[0] in SPARK else base
        for name in sorted(_imports(path)):
            owners = {d.lower().replace("_", "-") for d in dists.get(name, [name])}
            if not owners & allowed:
                wrong.append(f"{'/'.join(rel)}: import {name} ({', '.join(sorted(owners))})")
    assert wrong == []
