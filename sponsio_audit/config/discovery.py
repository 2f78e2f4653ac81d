"""Finding the configuration when none is named: ``sponsio.yaml`` from the current folder upwards.

In each folder from the start folder up to the repository root (the
nearest folder holding ``.git``; the file-system root outside a
repository) the first of these is taken: ``sponsio.yaml``,
``.sponsio.yaml``, a ``[tool.sponsio-audit]`` table in ``pyproject.toml``
(``contracts``: file paths relative to it, ``packs``: shipped pack names).
``ConfigSource`` says what is in force and how it was chosen, for
``--show-config`` and the reports.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sponsio_audit.config.documents import ConfigError, ConfigIssue

FILE_NAMES = ("sponsio.yaml", ".sponsio.yaml")
PYPROJECT = "pyproject.toml"
TABLE = "tool.sponsio-audit"
KEYS = ("contracts", "packs")


@dataclass(frozen=True)
class ConfigSource:
    """One source of contracts in force: a file or a shipped pack, and how it was chosen."""

    path: str | None
    pack: str | None
    found_by: str

    def show(self) -> str:
        """``sponsio.yaml`` or ``pack default``."""
        return self.path if self.path is not None else f"pack {self.pack}"


@dataclass(frozen=True)
class Discovered:
    """What discovery found: contract files and packs, where, and the folders it searched."""

    files: tuple[Path, ...]
    packs: tuple[str, ...]
    origin: Path | None  # the file that named them (None: nothing found)
    searched: tuple[Path, ...]

    def sources(self) -> tuple[ConfigSource, ...]:
        """The sources in force (the ``default`` pack when nothing was found)."""
        if self.origin is None:
            return (ConfigSource(None, "default", "default: no sponsio.yaml found"),)
        how = f"found: {self.origin}"
        return (
            *(ConfigSource(str(f), None, how) for f in self.files),
            *(ConfigSource(None, p, how) for p in self.packs),
        )


def repository_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder, or a worktree file)."""
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return None


def folders(start: Path) -> Iterator[Path]:
    """``start`` and its parents up to the repository root (all of them outside a repository)."""
    root = repository_root(start)
    for d in (start, *start.parents):
        yield d
        if d == root:
            return


def _strings(value: Any, key: str, file: Path) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(
        [ConfigIssue(f"{TABLE}.{key}", "expected a string or a list of strings", file)]
    )


def _pyproject(file: Path) -> tuple[list[Path], list[str]] | None:
    """The contracts and packs of ``[tool.sponsio-audit]`` (None when the table is absent)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: no TOML reader in the standard library
        return None
    try:
        doc = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError([ConfigIssue("", f"cannot read: {e}", file)]) from None
    except tomllib.TOMLDecodeError as e:
        if TABLE not in file.read_text(encoding="utf-8", errors="replace"):
            return None  # not ours to judge
        raise ConfigError([ConfigIssue("", f"invalid TOML: {e}", file)]) from None
    table = doc.get("tool", {}).get("sponsio-audit")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError([ConfigIssue(TABLE, "expected a table", file)])
    issues = [
        ConfigIssue(f"{TABLE}.{k}", f"unknown key; expected one of {', '.join(KEYS)}", file)
        for k in table
        if k not in KEYS
    ]
    if issues:
        raise ConfigError(issues)
    files = [file.parent / p for p in _strings(table.get("contracts", []), "contracts", file)]
    packs = _strings(table.get("packs", []), "packs", file)
    missing = [
        ConfigIssue(f"{TABLE}.contracts", f"no such file: {f}", file)
        for f in files
        if not f.is_file()
    ]
    if missing:
        raise ConfigError(missing)
    return files, packs


def discover(start: Path) -> Discovered:
    """Look for the configuration from ``start`` upwards (see the module docstring)."""
    searched: list[Path] = []
    for d in folders(start.resolve()):
        searched.append(d)
        for name in FILE_NAMES:
            if (d / name).is_file():
                return Discovered((d / name,), (), d / name, tuple(searched))
        if (d / PYPROJECT).is_file():
            found = _pyproject(d / PYPROJECT)
            if found is not None and (found[0] or found[1]):
                return Discovered(tuple(found[0]), tuple(found[1]), d / PYPROJECT, tuple(searched))
    return Discovered((), (), None, tuple(searched))
