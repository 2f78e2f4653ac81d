"""Reading configuration YAML: line numbers, ``${ENV}`` interpolation, includes, issues.

Every problem becomes a ``ConfigIssue`` naming the file, the line when
known and the YAML path (``agents.bot.contracts[2].G.args``); the loader
collects them all and raises one ``ConfigError``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import yaml

YamlPath = tuple[Union[str, int], ...]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PACKS_DIR = Path(__file__).parent.parent / "packs"
SPONSIO_PACKS_DIR = PACKS_DIR / "sponsio"


@dataclass(frozen=True)
class ConfigIssue:
    """One configuration problem: where (file, line, YAML path) and what was expected."""

    path: str
    message: str
    file: Path | None = None
    line: int | None = None

    def __str__(self) -> str:
        loc = str(self.file) if self.file is not None else "<config>"
        if self.line is not None:
            loc += f":{self.line}"
        return f"{loc}: {self.path}: {self.message}" if self.path else f"{loc}: {self.message}"


class ConfigError(ValueError):
    """Every problem found in a configuration (all of them, not just the first)."""

    def __init__(self, errors: list[ConfigIssue]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_*<>-]+\Z")


def render(path: YamlPath) -> str:
    """``("agents", "bot", "contracts", 2, "G")`` → ``agents.bot.contracts[2].G``."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            key = p if _PLAIN_KEY.match(p) else '"' + p.replace('"', '\\"') + '"'
            out += f".{key}" if out else key
    return out


@dataclass
class Doc:
    """One parsed YAML file and the line of every YAML path in it."""

    path: Path | None
    label: str
    data: Any
    lines: dict[YamlPath, int]
    issues: list[ConfigIssue] = field(repr=False, default_factory=list)

    def line(self, path: YamlPath) -> int | None:
        """The line of ``path`` or of its nearest ancestor that has one."""
        for n in range(len(path), -1, -1):
            got = self.lines.get(path[:n])
            if got is not None:
                return got
        return None

    def err(self, path: YamlPath, message: str) -> None:
        self.issues.append(ConfigIssue(render(path), message, self.path, self.line(path)))


MAX_NODES = 200_000
"""Nodes a YAML file may expand to (aliases counted at every use): a "billion laughs" file
of nested aliases would otherwise be walked, and interpolated, to billions of nodes."""

MAX_DEPTH = 200
"""Deepest YAML nesting (after aliases): a self-referencing alias (``&a [*a]``) is endless."""


def _lines(
    node: yaml.Node, out: dict[YamlPath, int], twice: list[YamlPath] | None = None
) -> tuple[YamlPath, str] | None:
    """Record the line of every YAML path under ``node`` (iteratively: any shape), and in
    ``twice`` the path of every key given a second time in its mapping (YAML keeps the
    last silently: a contract's second ``G:`` replaced its first, an agent's second entry
    dropped the first one's contracts).

    Returns where and why the walk passed ``MAX_NODES`` or ``MAX_DEPTH`` (it then
    stops), else None.
    """
    stack: list[tuple[yaml.Node, YamlPath]] = [(node, ())]
    seen = 0
    while stack:
        nd, path = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            return (
                path,
                f"aliases expand the file past {MAX_NODES} nodes (limit yaml_nodes={MAX_NODES})",
            )
        if len(path) > MAX_DEPTH:
            return path[
                :MAX_DEPTH
            ], f"nested deeper than {MAX_DEPTH} levels (limit yaml_depth={MAX_DEPTH})"
        out.setdefault(path, nd.start_mark.line + 1)
        if isinstance(nd, yaml.MappingNode):
            keys: set[str] = set()
            for k, _v in nd.value:
                key = str(k.value)
                if twice is not None and isinstance(k, yaml.ScalarNode) and key != "<<":
                    if key in keys:
                        twice.append((*path, key))
                    keys.add(key)
            for k, v in reversed(nd.value):
                kp = (*path, str(k.value))
                out[kp] = k.start_mark.line + 1  # a key's line, not its value's
                stack.append((v, kp))
        elif isinstance(nd, yaml.SequenceNode):
            stack.extend(((item, (*path, i)) for i, item in reversed(list(enumerate(nd.value)))))
    return None


_ENV = re.compile(r"(?<!\\)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate(value: Any, path: YamlPath, doc: Doc) -> Any:
    """Replace ``${NAME}`` and ``${NAME:-default}`` in every string value (not in keys)."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            got = os.environ.get(m.group(1))
            if got:
                return got
            if m.group(2) is not None:
                return m.group(2)
            if got is not None:
                return got
            doc.err(path, f"environment variable {m.group(1)} is not set "
                          f"(write ${{{m.group(1)}:-default}} to give a default)")  # fmt: skip
            return m.group(0)

        return _ENV.sub(sub, value)
    if isinstance(value, dict):
        return {k: interpolate(v, (*path, str(k)), doc) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, (*path, i), doc) for i, v in enumerate(value)]
    return value


def substitute_agent(value: Any, agent: str) -> Any:
    """Replace the ``<agent>`` placeholder of an included template with the agent id."""
    if agent == "*":
        return value
    if isinstance(value, str):
        return value.replace("<agent>", agent)
    if isinstance(value, dict):
        return {k: substitute_agent(v, agent) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_agent(v, agent) for v in value]
    return value


def load_doc(path: Path, label: str, issues: list[ConfigIssue]) -> Doc | None:
    """Read and parse one file; problems go to ``issues`` (None when it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        issues.append(ConfigIssue("", f"cannot read: {e}", path))
        return None
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()  # parsed once: the node tree gives the lines
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e)
        issues.append(ConfigIssue("", f"invalid YAML: {problem}", path, line))
        return None
    except RecursionError:
        issues.append(ConfigIssue("", "invalid YAML: nested too deep", path))
        return None
    finally:
        loader.dispose()
    lines: dict[YamlPath, int] = {}
    if node is not None:
        twice: list[YamlPath] = []
        bound = _lines(node, lines, twice)
        if bound is not None:
            where, why = bound
            issues.append(ConfigIssue(render(where), why, path, lines.get(where)))
            return None
        for where in twice:
            why = "this key is given twice in its mapping: YAML would keep only the last"
            issues.append(ConfigIssue(render(where), why, path, lines.get(where)))
        if twice:
            return None
    doc = Doc(path, label, None, lines, issues)
    doc.data = interpolate(data, (), doc)
    return doc


def shipped_packs() -> list[tuple[str, Path]]:
    """Every shipped pack as (include name, file): this project's, then Sponsio's."""
    out = [(p.stem, p) for p in sorted(PACKS_DIR.glob("*.yaml"))]
    for p in sorted(SPONSIO_PACKS_DIR.glob("*.yaml")):
        folder, _, name = p.stem.partition("__")
        out.append((f"sponsio:{folder}/{name}", p))
    return out


def resolve_include(name: str, base: Path, packs_only: bool = False) -> Path | str:
    """The file an include names, or an error message saying what is available.

    ``sponsio:<folder>/<name>`` is a shipped Sponsio pack, a bare name a pack of
    this project, anything else a file path relative to the including file.
    """
    known = ", ".join(n for n, _ in shipped_packs())
    if name.startswith("sponsio:"):
        p = SPONSIO_PACKS_DIR / (name.removeprefix("sponsio:").replace("/", "__") + ".yaml")
        return p if p.is_file() else f"unknown Sponsio pack {name!r}; shipped packs: {known}"
    if "/" not in name and "\\" not in name and not name.endswith((".yaml", ".yml")):
        p = PACKS_DIR / f"{name}.yaml"
        if p.is_file():
            return p
    if not packs_only:
        p = Path(name).expanduser()
        p = p if p.is_absolute() else base / p
        if p.is_file():
            return p
    return f"no pack or file named {name!r}; shipped packs: {known}"
