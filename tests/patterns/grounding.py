"""A tiny test-local grounding of the atoms the patterns use (SEMANTICS.md §5, simplified).

An event is a dict: ``tool`` (name or None for a non-tool event), optional
``args`` (dict), ``out`` (LLM output), ``inp`` (LLM input), ``tokens``,
``ms``, ``depth``, ``flows`` (set of (src, dst) reached so far), ``ctx``
(dict), and ``seed``: atoms this grounding does not model get a value
derived from (atom, seed), so both forms of a property see the same
arbitrary values. Tool names are compared exactly (no MCP prefix here).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from sponsio_audit.ltl.ast import Atom, Formula, atoms
from sponsio_audit.ltl.reference import Value
from sponsio_audit.regexes import compile_regex

Event = dict[str, Any]


def _search(regex: str, text: str) -> bool:
    """Search with the project's regex policy (RE2, or backtracking for lookaround)."""
    return compile_regex(regex).search(text) is not None


def _rand(a: Atom, seed: int, modulo: int) -> int:
    return zlib.crc32(repr((a, seed)).encode()) % modulo


def _within(args: dict[str, Any], prefixes: Sequence[str]) -> bool:
    paths = [v for v in args.values() if isinstance(v, str) and v.startswith("/")]
    return all(any(p == q.rstrip("/") or p.startswith(q.rstrip("/") + "/") for q in prefixes)
               for p in paths)  # fmt: skip


def value(a: Atom, i: int, trace: Sequence[Event], perms: frozenset[str]) -> Value:
    """The value of atom ``a`` at position ``i``."""
    e = trace[i]
    tool = e.get("tool")
    args = e.get("args") or {}
    calls = [x.get("tool") for x in trace[: i + 1]]
    name, xs = a.name, a.args
    if name == "called":
        return tool == xs[0]
    if name == "called_any":
        return tool is not None
    if name == "count":
        return sum(1 for t in calls if t == xs[0])
    if name == "consecutive_count":
        n = 0
        for t in reversed(calls):
            if t != xs[0]:
                break
            n += 1
        return n
    if name == "perm":
        return xs[0] in perms
    if name == "arg_field_has":
        return tool == xs[0] and bool(_search(str(xs[2]), str(args.get(str(xs[1]), ""))))
    if name == "arg_has":
        text = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
        return tool == xs[0] and bool(_search(str(xs[1]), text))
    if name == "arg_paths_within":
        return tool == xs[0] and _within(args, [str(p) for p in xs[1:]])
    if name == "arg_length":
        return len(str(args.get(str(xs[1]), ""))) if tool == xs[0] else 0
    if name == "arg_numeric" and "args" in e:
        return float(args[str(xs[1])]) if tool == xs[0] else 0
    if name == "count_with" and "args" in e:
        return sum(
            1
            for x in trace[: i + 1]
            if x.get("tool") == xs[0]
            and _search(str(xs[1]), json.dumps(x.get("args") or {}, separators=(",", ":")))
        )
    if name == "llm_output_contains" and "out" in e:
        return bool(_search(str(xs[0]), e["out"]))
    if name == "llm_input_contains" and "inp" in e:
        return bool(_search(str(xs[0]), e["inp"]))
    if name == "token_count" and "tokens" in e:
        return sum(x.get("tokens", 0) for x in trace[: i + 1])
    if name == "latency_exceeds" and "ms" in e:
        return tool == xs[0] and e["ms"] > float(xs[1])
    if name == "flow" and "flows" in e:
        return (xs[0], xs[1]) in e["flows"]
    if name == "delegation_depth" and "depth" in e:
        return int(e["depth"])
    if name == "ctx" and "ctx" in e:
        return e["ctx"].get(xs[0]) == xs[1]
    seed = int(e.get("seed", 0))
    if name in ("token_count", "delegation_depth", "count_with", "arg_numeric"):
        return _rand(a, seed, 6)
    return _rand(a, seed, 3) == 0


def ground(formulas: Iterable[Formula], trace: Sequence[Event],
           perms: Iterable[str] = ()) -> list[dict[Atom, Value]]:  # fmt: skip
    """One valuation per event over every atom of ``formulas``."""
    used: dict[Atom, None] = {}
    for f in formulas:
        for a in atoms(f):
            used.setdefault(a, None)
    p = frozenset(perms)
    return [{a: value(a, i, trace, p) for a in used} for i in range(len(trace))]


def tools(*names: str | None) -> list[Event]:
    """A trace of tool calls (None: a non-tool event)."""
    return [{"tool": n} for n in names]
