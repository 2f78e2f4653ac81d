"""The import graph of ``sponsio_audit``: data flows one way (docs/architecture.md).

Every module file is read with ``ast`` (imports inside functions and under
``TYPE_CHECKING`` included, relative imports resolved). Each module belongs
to a *unit*: its top-level module or top-level package. A unit may import
only units of its own rank or lower, and no two units import each other,
directly or through others. The lazy face ``sponsio_audit/__init__.py`` is
left out: it exists to reach every stage.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import sponsio_audit

RANKS: dict[str, int] = {
    # 0 base: shared by every stage, importing nothing of the package above it
    "arrow_setup": 0,
    "lazy": 0,
    "event": 0,
    "vocab": 0,
    "regexes": 0,
    "redact": 0,
    "recursion": 0,
    "trace_batches": 0,
    "threads": 0,
    # 1 formulas, parser, evaluators, patterns (no OTEL, no atoms)
    "ltl": 1,
    # 2 grounding of ltl atoms over events
    "atoms": 2,
    # 3 sponsio.yaml -> Contract objects
    "config": 3,
    # 4 files -> store (may import only rank 0 and itself, see INGEST_MAY_IMPORT)
    "ingest": 4,
    # 5 evaluating contracts over the store's events
    "engine": 5,
    "verdicts": 5,
    "row_order": 5,
    "reasons": 5,
    "evaluation": 5,
    # 6 the one path from sources to stored verdicts; the guard beside it
    "api": 6,
    "provenance": 6,
    "totals": 6,
    "guard": 6,
    # the same audit on Apache Spark (the [spark] extra), beside api
    "spark": 6,
    # 7 reports read results
    "report": 7,
    # 8 the command line
    "cli": 8,
    "cli_spark": 8,
    # 9 the process's entry point, above the command line it loads
    "entry": 9,
    "__main__": 9,
}
"""Rank of each top-level module or package of ``sponsio_audit``."""

INGEST_MAY_IMPORT = {unit for unit, rank in RANKS.items() if rank == 0} | {"ingest"}
"""``ingest`` knows nothing of formulas: base units and itself only."""

KNOWN_EDGES: set[tuple[str, str]] = set()
"""Edges that break the rules today and are being removed (each names its issue)."""

PACKAGE = Path(sponsio_audit.__file__).parent
ROOT = "sponsio_audit"


def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The package modules ``name`` imports (``from a import b`` → ``a.b`` when a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            targets = [
                f"{stem}.{a.name}" if f"{stem}.{a.name}" in MODULES else stem for a in node.names
            ]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t.startswith(ROOT):
                found.add(t)
    return found


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def _unit_edges() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) → the modules that make the edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for name, path in MODULES.items():
        if name == ROOT:
            continue
        for target in _imports(name, path):
            a, b = _unit(name), _unit(target)
            if a != b:
                edges.setdefault((a, b), []).append(f"{name} -> {target}")
    return edges


EDGES = _unit_edges()


def test_every_unit_has_a_rank() -> None:
    units = {_unit(m) for m in MODULES if m != ROOT}
    assert units - RANKS.keys() == set(), "add the new module or package to RANKS"


def test_nothing_imports_the_lazy_face() -> None:
    assert [e for (a, b), e in EDGES.items() if b == ROOT] == []


def test_no_import_from_a_later_stage() -> None:
    bad = {
        edge: who
        for edge, who in EDGES.items()
        if edge not in KNOWN_EDGES and RANKS.get(edge[1], 99) > RANKS.get(edge[0], -1)
    }
    assert bad == {}


def test_every_allowed_edge_still_exists() -> None:
    """An allow-list entry goes as soon as its edge does, so the list cannot hide a new one."""
    assert KNOWN_EDGES - EDGES.keys() == set()


def test_ingest_imports_only_base() -> None:
    bad = {b: who for (a, b), who in EDGES.items() if a == "ingest" and b not in INGEST_MAY_IMPORT}
    assert bad == {}


def test_no_cycle_between_units() -> None:
    graph: dict[str, set[str]] = {}
    for a, b in EDGES:
        if (a, b) not in KNOWN_EDGES:
            graph.setdefault(a, set()).add(b)
    assert _cycles(graph) == []


def test_no_cycle_between_modules_of_ingest() -> None:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        if name.startswith(f"{ROOT}.ingest.") or name == f"{ROOT}.ingest":
            graph[name] = {t for t in _imports(name, path) if t != name and t != f"{ROOT}.ingest"}
    assert _cycles(graph) == []


SQL_WRITE = re.compile(r"\b(CREATE|INSERT|UPDATE|DELETE|DROP|ALTER|COPY|ATTACH)\b")


def test_reports_do_not_write_to_the_store() -> None:
    """Reports only read: no SQL that writes, no Arrow table registered on the connection."""
    writes = []
    for name, path in MODULES.items():
        if _unit(name) != "report":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if SQL_WRITE.search(node.value):
                    writes.append(f"{name}: {node.value[:60]!r}")
            elif isinstance(node, ast.Attribute) and node.attr in ("register", "from_arrow"):
                writes.append(f"{name}: .{node.attr}")
    assert writes == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_checker_sees_a_cycle_and_a_late_import() -> None:
    """The graph reader itself: a planted cycle is found, and real edges are read."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert ("api", "evaluation") in EDGES  # a top-level import
    assert ("cli", "api") in EDGES  # an import inside a function
    assert ("ingest", "event") in EDGES  # a relative import
