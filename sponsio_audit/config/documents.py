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


def _lines(node: yaml.Node, path: YamlPath, out: dict[YamlPath, int]) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            kp = (*path, str(k.value))
            _lines(v, kp, out)
            out[kp] = k.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*path, i), out)


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
    finally:
        loader.dispose()
    lines: dict[YamlPath, int] = {}
    if node is not None:
        _lines(node, (), lines)
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
