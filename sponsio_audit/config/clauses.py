"""One constraint item of a contract → a ``Clause``: ``{pattern, args}``, ``{ltl}`` or a phrase.

``ltl:`` formulas are checked against the atom registry (known name, number
of arguments, bool atoms as formulas and int atoms in comparisons, regexes
compiled by the regex policy: RE2, or the backtracking engine for lookaround
and backreferences). An LLM-judge name gives a skipped clause instead of an
error; a regex neither engine compiles is an error.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable
from dataclasses import fields, is_dataclass, replace
from typing import Any

from sponsio_audit.atoms import registry as atoms
from sponsio_audit.config.documents import Doc, YamlPath
from sponsio_audit.config.phrasings import NL_HELP, phrase
from sponsio_audit.ltl.ast import Atom, Cmp, Formula, subformulas
from sponsio_audit.ltl.ast import atoms as atoms_of
from sponsio_audit.ltl.contract import Clause
from sponsio_audit.ltl.parse import ParseError, parse
from sponsio_audit.ltl.patterns import (
    JUDGE_SKIP,
    PatternArgError,
    RegexError,
    compile_regex,
    lookup,
    registry,
)

ITEM_KEYS = {"pattern", "args", "ltl", "desc", "source"}
ITEM_IGNORED = {"context_scope"}  # Sponsio's judge context option, found in its packs

Ignore = Callable[[Doc, YamlPath], None]


def _suggest(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def map_atoms(f: Any, fn: Callable[[Atom], Atom]) -> Any:
    """``f`` with every atom (as a formula or a comparison term) replaced by ``fn(atom)``."""
    if isinstance(f, Atom):
        return fn(f)
    if not is_dataclass(f):
        return f
    changes = {
        fl.name: map_atoms(getattr(f, fl.name), fn)
        for fl in fields(f)
        if is_dataclass(getattr(f, fl.name))
    }
    return replace(f, **changes) if changes else f  # type: ignore[type-var]


def check_formula(f: Formula) -> tuple[Formula, list[str], str | None]:
    """Check ``f``'s atoms against the registry: (formula with canonical atom names,
    errors, skip reason)."""
    errors: list[str] = []
    skip: str | None = None
    for a in atoms_of(f):
        spec = atoms.lookup(a.name)
        pat = lookup(a.name)
        if spec is None:
            if pat is not None and pat.judge:
                skip = skip or JUDGE_SKIP
            elif pat is not None:
                errors.append(f"{a.name} is a pattern, not an atom: write {{pattern: {a.name}, "
                              f"args: [...]}} instead of an ltl formula")  # fmt: skip
            else:
                errors.append(f"unknown atom {a.name!r}{_suggest(a.name, atoms.names())}")
            continue
        if not spec.accepts(len(a.args)):
            want = ", ".join(f"{p.name}: {p.kind}" for p in spec.params)
            more = " or more" if spec.variadic else ""
            errors.append(
                f"atom {a.name} takes {len(spec.params)}{more} argument(s) ({want}), "
                f"got {len(a.args)}"
            )
            continue
        for i in atoms.regex_params(spec):
            rx = a.args[i]
            if not isinstance(rx, str):
                errors.append(f"atom {a.name}: argument {i + 1} must be a regex string")
                continue
            try:
                compile_regex(rx)
            except RegexError as e:  # neither RE2 nor the backtracking engine compiles it
                errors.append(f"atom {a.name}: {e}")
    for g in subformulas(f):
        if isinstance(g, Atom):
            spec = atoms.lookup(g.name)
            if spec is not None and spec.value != "bool":
                example = "== 'x'" if spec.value == "any" else "<= 3"
                errors.append(f"{g.name} is a {_VALUE_NAMES[spec.value]} atom: compare it, "
                              f"e.g. {g.name}(...) {example}")  # fmt: skip
        elif isinstance(g, Cmp):
            for t in (g.left, g.right):
                spec = atoms.lookup(t.name) if isinstance(t, Atom) else None
                if spec is not None and spec.value == "bool":
                    errors.append(f"{t.name} is a bool atom and cannot be compared")  # type: ignore[union-attr]
    canonical = map_atoms(f, lambda a: replace(a, name=atoms.canonical_name(a.name)))
    return canonical, errors, skip


_VALUE_NAMES = {"int": "int", "number": "number", "any": "value"}


def _args_path(item: dict[str, Any], path: YamlPath, where: tuple[int | str, ...]) -> YamlPath:
    args = item.get("args")
    if isinstance(args, (list, dict)):
        return (*path, "args", *where)
    return (*path, "args")


def clause_from_item(
    doc: Doc, item: Any, path: YamlPath, source: str | None, assumption: bool, ignore: Ignore
) -> Clause | None:
    """The clause for one constraint item, or None after recording its errors in ``doc``."""
    if isinstance(item, str):
        try:
            cl = phrase(item, assumption)
        except PatternArgError as e:
            doc.err(path, e.message)
            return None
        if cl is None:
            shown = item if len(item) <= 60 else item[:57] + "..."
            doc.err(path, f"{NL_HELP}; got {shown!r}")
            return None
        return replace(cl, source=source)
    if not isinstance(item, dict):
        doc.err(path, "expected a constraint: {pattern: NAME, args: [...]}, {ltl: FORMULA} "
                      "or a backtick phrasing")  # fmt: skip
        return None
    ok = True
    for k in item:
        if k in ITEM_IGNORED:
            ignore(doc, (*path, k))
        elif k not in ITEM_KEYS:
            doc.err((*path, str(k)), f"unknown constraint key {k!r}; expected one of "
                                     f"{', '.join(sorted(ITEM_KEYS | ITEM_IGNORED))}")  # fmt: skip
            ok = False
    desc, src = item.get("desc"), item.get("source", source)
    for key, v in (("desc", desc), ("source", src)):
        if v is not None and not isinstance(v, str):
            doc.err((*path, key), f"expected a string, got {v!r}")
            ok = False
    if ("pattern" in item) == ("ltl" in item):
        doc.err(path, "expected exactly one of pattern (with args) or ltl")
        return None
    if "ltl" in item and "args" in item:
        doc.err((*path, "args"), "args belong to a pattern; an ltl formula takes none")
        return None
    if "pattern" in item:
        name = item["pattern"]
        spec = lookup(name) if isinstance(name, str) else None
        if spec is None:
            doc.err((*path, "pattern"), f"unknown pattern {name!r}"
                    f"{_suggest(str(name), list(registry()))}; `sponsio-audit patterns` "
                    "lists them")  # fmt: skip
            return None
        try:
            res = spec.build(item.get("args"), desc)
        except PatternArgError as e:
            doc.err(_args_path(item, path, e.where), f"{spec.name}: {e.message}")
            return None
        return res.clause(desc, src) if ok else None
    text = item["ltl"]
    if not isinstance(text, str):
        doc.err((*path, "ltl"), f"expected a formula string, got {text!r}")
        return None
    try:
        f = parse(text)
        f, errors, skip = check_formula(f)
    except ParseError as e:
        doc.err((*path, "ltl"), f"column {e.column}: {e.message} in {text!r}")
        return None
    except RecursionError:  # recursion.deep gives the CLI room for ~5 000 levels
        limit = sys.getrecursionlimit()
        doc.err((*path, "ltl"), f"formula nested too deep to read (limit frames={limit})")
        return None
    for msg in errors:
        doc.err((*path, "ltl"), msg)
    if errors or not ok:
        return None
    return Clause(f, desc=desc or "", source=src, skipped=skip)
