"""Typed pattern parameters and the binding of YAML-style arguments to them.

``bind`` accepts a positional list, a mapping by parameter name or one
scalar, checks each value against its parameter's kind (regexes through the
regex policy: RE2, or the backtracking engine for lookaround) and collects
the skip reasons it meets.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sponsio_audit.ltl.parse import MAX_INT
from sponsio_audit.regexes import RegexError, compile_regex
from sponsio_audit.vocab import TOKEN_KINDS as _TOKEN_KINDS

LOOKAROUND_SKIP = "regex uses lookaround, which RE2 cannot run"

_REQUIRED: Any = object()

# list kinds and the kind of their elements
LIST_KINDS = {"tools": "tool", "regexes": "regex", "paths": "path", "values": "value"}
TOKEN_KINDS = {k: k for k in _TOKEN_KINDS} | {f"{k}_tokens": k for k in _TOKEN_KINDS}
"""Accepted spellings of a token kind and the kind each stands for."""


@dataclass(frozen=True)
class Param:
    """A typed parameter: tool, tools, field, regex, regexes, int, number, path, paths,
    perm, kind (token kind), key, value, values, agent or text."""

    name: str
    kind: str
    default: Any = _REQUIRED
    minimum: int | None = None

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    @property
    def is_list(self) -> bool:
        return self.kind in LIST_KINDS

    def show(self) -> str:
        """``name: kind`` with ``…`` for lists and ``=default`` when optional."""
        s = f"{self.name}: {self.kind}{'…' if self.is_list else ''}"
        if not self.required:
            d = self.default
            shown = "[…]" if isinstance(d, tuple) and len(d) > 2 else repr(d)
            s += f" = {shown}"
        return s


class PatternArgError(ValueError):
    """A bad argument; ``where`` is its position inside ``args`` (indices and names)."""

    def __init__(self, message: str, where: tuple[int | str, ...] = ()) -> None:
        self.message = message
        self.where = where
        super().__init__(message)


def parse_params(*spec: str, **defaults: Any) -> tuple[Param, ...]:
    """Parameters from ``"name:kind"`` strings; ``name=value`` keywords give defaults,
    ``name_min=k`` a minimum for an int."""
    out = []
    for s in spec:
        name, kind = s.split(":")
        out.append(Param(name, kind, defaults.get(name, _REQUIRED), defaults.get(f"{name}_min")))
    return tuple(out)


def _within(p: Param, v: int, where: tuple[int | str, ...]) -> None:
    """A whole number a formula may hold (``parse.MAX_INT`` either way), else the error."""
    if abs(v) > MAX_INT:
        raise PatternArgError(f"{p.name}: expected a number of at most {MAX_INT:,}", where)


def _scalar(p: Param, kind: str, v: Any, where: tuple[int | str, ...], skips: list[str]) -> Any:
    if kind == "int":
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise PatternArgError(f"{p.name}: expected a whole number, got {v!r}", where)
        _within(p, v, where)
        if p.minimum is not None and v < p.minimum:
            raise PatternArgError(f"{p.name}: expected a number ≥ {p.minimum}, got {v}", where)
        return v
    if kind == "number":
        if isinstance(v, str):
            with contextlib.suppress(ValueError):
                v = float(v) if any(ch in v for ch in ".eE") else int(v)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise PatternArgError(f"{p.name}: expected a number, got {v!r}", where)
        if isinstance(v, int):
            _within(p, v, where)
        return v
    if kind == "value":
        if isinstance(v, bool):
            return "true" if v else "false"
        if not isinstance(v, (str, int, float)):
            raise PatternArgError(f"{p.name}: expected a string or number, got {v!r}", where)
        return v
    if isinstance(v, int) and not isinstance(v, bool) and kind in ("field", "key", "perm"):
        v = str(v)
    if not isinstance(v, str) or (kind != "text" and not v.strip()):
        what = {"tool": "a tool name", "regex": "a regex", "path": "a path prefix"}
        expected = what.get(kind, f"a {kind} (a non-empty string)")
        raise PatternArgError(f"{p.name}: expected {expected}, got {v!r}", where)
    if kind == "regex":
        try:
            compile_regex(v)
        except RegexError as e:  # neither RE2 nor the backtracking engine compiles it
            raise PatternArgError(f"{p.name}: {e}", where) from None
    if kind == "kind":
        if v not in TOKEN_KINDS:
            raise PatternArgError(
                f"{p.name}: expected one of input, output, total; got {v!r}", where
            )
        return TOKEN_KINDS[v]
    return v


def _coerce(p: Param, v: Any, where: tuple[int | str, ...], skips: list[str]) -> Any:
    if not p.is_list:
        if isinstance(v, (list, tuple, dict)):
            raise PatternArgError(f"{p.name}: expected a single {p.kind}, got a list", where)
        return _scalar(p, p.kind, v, where, skips)
    items = [v] if not isinstance(v, (list, tuple)) else list(v)
    if not items:
        raise PatternArgError(f"{p.name}: expected at least one {LIST_KINDS[p.kind]}", where)
    elem = LIST_KINDS[p.kind]
    single = not isinstance(v, (list, tuple))
    return tuple(
        _scalar(p, elem, x, where if single else (*where, j), skips) for j, x in enumerate(items)
    )


def bind(params: Sequence[Param], args: Any) -> tuple[dict[str, Any], list[str]]:
    """Bind YAML ``args`` to ``params``: positional list, mapping by name, or one scalar.

    A list parameter in last place also takes the remaining positional arguments
    (``[tool, field, re1, re2]`` as well as ``[tool, field, [re1, re2]]``).
    Returns the bound values and the skip reasons met (regex lookaround).
    """
    skips: list[str] = []
    given: dict[str, tuple[Any, tuple[int | str, ...]]] = {}
    sig = ", ".join(p.show() for p in params)
    if args is None:
        args = []
    if isinstance(args, Mapping):
        names = {p.name for p in params}
        for k, v in args.items():
            if k not in names:
                raise PatternArgError(f"unknown argument {k!r}; expected ({sig})", (str(k),))
            given[str(k)] = (v, (str(k),))
    else:
        seq = list(args) if isinstance(args, (list, tuple)) else [args]
        n = len(params)
        if len(seq) > n and n and params[-1].is_list:
            if any(isinstance(x, (list, tuple)) for x in seq[n - 1 :]):
                raise PatternArgError(f"too many arguments; expected ({sig})")
            tail = seq[n - 1 :]
            seq = [*seq[: n - 1], tail]
        elif len(seq) > n:
            raise PatternArgError(f"expected at most {n} argument(s) ({sig}), got {len(seq)}")
        for i, (p, v) in enumerate(zip(params, seq, strict=False)):
            given[p.name] = (v, (i,))
    out: dict[str, Any] = {}
    for p in params:
        if p.name in given and not (given[p.name][0] is None and p.default is None):
            v, where = given[p.name]
            out[p.name] = _coerce(p, v, where, skips)
        elif p.required:
            raise PatternArgError(f"missing argument {p.name!r}; expected ({sig})")
        else:
            out[p.name] = p.default
    return out, skips
