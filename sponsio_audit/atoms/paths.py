"""Path-like argument values and the ``arg_paths_within`` check (SEMANTICS.md §5).

Shared by both groundings. The rule, decided here because SEMANTICS.md only
says "every path-like value":

* **Path-like values** of an arguments object, searched at any depth
  (objects and lists): the whole string value of a key named one of
  ``PATH_KEYS`` (compared lower-cased; a list of strings under such a key
  gives each string), and, in every other string value, each
  whitespace-separated token that starts with ``/``, ``~``, ``./`` or
  ``../`` once quotes and shell punctuation (``'"`<>|;&()``) are stripped
  from its ends; a token ``name=value`` is judged by its value. So the
  command ``rm -rf /data/x >/tmp/log`` has the paths ``/data/x`` and
  ``/tmp/log``.
* **Normalisation** (lexical, no file system): repeated ``/``, ``.`` and a
  trailing ``/`` vanish; ``..`` removes the previous component (at ``/`` it
  stays at ``/``). ``~`` is not expanded: ``~`` or ``~user`` is its own root.
  A relative path is relative to an unknown directory.
* **Within**: a path lies under a prefix when both have the same root
  (``/``, the same ``~…``, or both relative) and the prefix's components
  are the first components of the path. ``/data2`` is not under ``/data``;
  ``/data/../etc/passwd`` is ``/etc/passwd``; a relative path that climbs
  above its start (``../x``) is under no prefix; ``.`` as a prefix admits
  every other relative path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sponsio_audit.redact import REDACTED

PATH_KEYS = frozenset(
    {
        "path",
        "paths",
        "file",
        "files",
        "file_path",
        "filepath",
        "filename",
        "dir",
        "directory",
        "cwd",
        "target",
        "src",
        "dst",
        "dest",
        "destination",
    }
)
_STARTS = ("/", "~", "./", "../")
_PUNCT = "'\"`<>|;&()"

Norm = tuple[str, tuple[str, ...]]
"""A normalised path: (root, components); root is "/", "~…" or "" (relative)."""


def _tokens(text: str) -> Iterator[str]:
    for raw in text.split():
        token = raw.strip(_PUNCT)
        if "=" in token and not token.startswith(_STARTS):
            token = token.split("=", 1)[1].strip(_PUNCT)
        if token.startswith(_STARTS) or token in (".", ".."):
            yield token


def path_values(args: Any) -> Iterator[str]:
    """Every path-like value of an arguments object, in document order; a ``<redacted>``
    value is none (it was not recorded: the caller tells that from the args text)."""
    if isinstance(args, dict):
        for key, value in args.items():
            if isinstance(key, str) and key.lower() in PATH_KEYS:
                if isinstance(value, str):
                    if value != REDACTED:
                        yield value
                    continue
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    yield from (v for v in value if v != REDACTED)
                    continue
            yield from path_values(value)
    elif isinstance(args, list):
        for value in args:
            yield from path_values(value)
    elif isinstance(args, str) and args != REDACTED:
        yield from _tokens(args)


def normalise(path: str) -> Norm:
    """Lexical normal form of ``path`` (see the module docstring)."""
    parts = path.split("/")
    if path.startswith("/"):
        root, rest = "/", parts[1:]
    elif path.startswith("~"):
        root, rest = parts[0], parts[1:]
    else:
        root, rest = "", parts
    out: list[str] = []
    for part in rest:
        if part in ("", "."):
            continue
        if part == "..":
            if out and out[-1] != "..":
                out.pop()
            elif root != "/":
                out.append("..")  # climbs above ~ or the unknown working directory
            continue
        out.append(part)
    return root, tuple(out)


def under(path: Norm, prefix: Norm) -> bool:
    """``path`` lies under ``prefix`` by whole components (both normalised)."""
    root, comps = path
    proot, pcomps = prefix
    if root != proot or (comps and comps[0] == ".."):
        return False
    return comps[: len(pcomps)] == pcomps


def paths_within(args: Any, prefixes: Sequence[Norm]) -> bool:
    """Every path-like value of ``args`` lies under one of ``prefixes`` (true when none)."""
    for value in path_values(args):
        p = normalise(value)
        if not any(under(p, q) for q in prefixes):
            return False
    return True
