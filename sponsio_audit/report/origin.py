"""Where a file lives, as a code-scanning tool wants it: a URI relative to the repository root.

GitHub code scanning places an alert only on a file of the repository,
by a URI relative to the checkout root (SARIF ``uriBaseId``
``%SRCROOT%``). That root is the repository of the working directory:
the nearest ancestor holding a ``.git`` entry (a directory, or a file for
worktrees and submodules), or the working directory outside any. A file
outside the root is given as an absolute ``file:`` URI.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from urllib.parse import quote

SRCROOT = "%SRCROOT%"


def _quote(path: str) -> str:
    return quote(path.replace("\\", "/"), safe="/:._-~")


@functools.cache
def repository_root(directory: Path) -> Path | None:
    """The nearest ancestor of ``directory`` (itself included) holding ``.git``."""
    for d in (directory, *directory.parents):
        if (d / ".git").exists():
            return d
    return None


def source_root() -> Path:
    """What ``%SRCROOT%`` stands for: the repository of the working directory, else itself."""
    cwd = Path.cwd()
    return repository_root(cwd) or cwd


def artifact(path: str | None) -> dict[str, str]:
    """A SARIF ``artifactLocation`` of ``path``: relative to ``%SRCROOT%`` when under it."""
    if not path or path == "-":
        return {"uri": _quote(path or "stdin")}
    full = Path(os.path.normpath(Path.cwd() / path))
    root = source_root()
    if full.is_relative_to(root):
        return {"uri": _quote(full.relative_to(root).as_posix()), "uriBaseId": SRCROOT}
    return {"uri": full.as_uri()}


def location(path: str | None, line: int | None = None) -> dict[str, object]:
    """A SARIF ``physicalLocation`` of ``path`` (with ``region.startLine`` when ``line``)."""
    loc: dict[str, object] = {"artifactLocation": artifact(path)}
    if line:
        loc["region"] = {"startLine": int(line)}
    return loc
