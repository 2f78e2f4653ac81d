"""Sponsio's constructor form of formulas (``G(Implies(called(a), Not(called(b))))``).

Sponsio's packs write some ``ltl:`` formulas with its AST class names
instead of the infix syntax (ARCHITECTURE.md "Configuration
compatibility"). ``parse_constructor`` reads that form into the same
formula tree the infix parser gives for the same meaning:

- ``G F X Not`` (one argument), ``And Or Implies U`` (two), ``true``/``false``;
- ``Le Lt Ge Gt Eq`` over terms: ``Const(n)``, ``Var(name, arg…)`` (the
  atom ``name(arg…)``), ``ArgLength(t, f)`` (``arg_length(t, f)``),
  ``ArgValue(t, f)`` (``arg_value(t, f)``), ``CtxValue(k)``
  (``ctx_value(k)``), a number, a quoted string, a bare identifier (a
  0-argument atom) or an atom;
- any lower-case ``name(arg…)`` is an atom, its arguments read as in the infix form.

A Sponsio constructor with no counterpart here (``UnaryFn``, ``Subset``,
any other capitalised name) is a ``ParseError`` naming it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sponsio_audit.ltl.ast import (
    Always,
    And,
    Arg,
    Atom,
    Bool,
    Cmp,
    Eventually,
    Formula,
    Implies,
    Next,
    Not,
    Num,
    Or,
    Str,
    Term,
    Until,
    atoms,
)
from sponsio_audit.ltl.parse import ParseError, _is_number, _number, _unescape

UNARY: dict[str, Callable[[Formula], Formula]] = {
    "G": Always,
    "F": Eventually,
    "X": Next,
    "Not": Not,
}
BINARY: dict[str, Callable[[Formula, Formula], Formula]] = {
    "And": And,
    "Or": Or,
    "Implies": Implies,
    "U": Until,
}
COMPARISONS = {"Le": "<=", "Lt": "<", "Ge": ">=", "Gt": ">", "Eq": "=="}
TERM_ATOMS = {
    "ArgLength": ("arg_length", 2),
    "ArgValue": ("arg_value", 2),
    "CtxValue": ("ctx_value", 1),
}
"""Value constructors → (atom name here, number of arguments)."""
TERMS = {"Const", "Var", *TERM_ATOMS}
NAMES = frozenset({*UNARY, *BINARY, *COMPARISONS, *TERMS})
"""Every constructor name that has a counterpart here."""
NO_COUNTERPART = frozenset({"UnaryFn", "Subset"})
"""Sponsio AST classes that have none (Sponsio's own parser does not read them either)."""

_LOOKS = re.compile(r"(?<![\w$])(?:{})\s*\(".format("|".join(sorted(NAMES - set("GFXU")))))
_TOKEN = re.compile(
    r"""\s*(?:(?P<p>[(),])|(?P<s>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<w>[^\s(),'"]+))"""
)


def looks_constructor(text: str) -> bool:
    """True when ``text`` uses a constructor name of Sponsio's AST (``Implies(``, ``Le(``…)."""
    return _LOOKS.search(text) is not None


def names_constructor(f: Formula) -> bool:
    """True when a formula read as infix has an atom named like a constructor (``Not(x)``)."""
    return any(a.name in NAMES or a.name in NO_COUNTERPART for a in atoms(f))


@dataclass(frozen=True)
class _Tok:
    kind: str  # p (punctuation), s (quoted string), w (word), end
    value: str
    col: int  # 0-based


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos:].strip():
                col = pos + len(text[pos:]) - len(text[pos:].lstrip())
                raise ParseError("unterminated string", text, col + 1)
            break
        kind = m.lastgroup or "w"
        value = m.group(kind)
        col = m.start(kind)
        out.append(_Tok(kind, _unescape(value[1:-1]) if kind == "s" else value, col))
        pos = m.end()
    out.append(_Tok("end", "", len(text)))
    return out


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def error(self, message: str, tok: _Tok | None = None) -> ParseError:
        return ParseError(message, self.text, (tok or self.tok).col + 1)

    def take(self) -> _Tok:
        t = self.tok
        self.i += 1
        return t

    def at(self, value: str) -> bool:
        return self.tok.kind == "p" and self.tok.value == value

    def expect(self, value: str) -> None:
        if not self.at(value):
            found = self.tok.value or "end of formula"
            raise self.error(f"expected {value!r}, found {found!r}")
        self.i += 1

    def called(self) -> bool:
        """The next token is ``(`` (the current word is applied)."""
        nxt = self.toks[self.i + 1]
        return nxt.kind == "p" and nxt.value == "("

    # grammar ------------------------------------------------------------

    def formula(self) -> Formula:
        tok = self.tok
        if tok.kind != "w":
            found = tok.value or "end of formula"
            raise self.error(f"expected a formula, found {found!r}")
        name = tok.value
        if name in ("true", "false") and not self.called():
            self.take()
            return Bool(name == "true")
        if name in UNARY and self.called():
            self.take()
            self.expect("(")
            arg = self.formula()
            self.expect(")")
            return UNARY[name](arg)
        if name in BINARY and self.called():
            self.take()
            self.expect("(")
            left = self.formula()
            self.expect(",")
            right = self.formula()
            self.expect(")")
            return BINARY[name](left, right)
        if name in COMPARISONS and self.called():
            self.take()
            self.expect("(")
            lhs = self.term()
            self.expect(",")
            rhs = self.term()
            self.expect(")")
            return Cmp(COMPARISONS[name], lhs, rhs)
        if name in TERMS:
            raise self.error(
                f"{name}(...) is a value, not a formula: compare it, e.g. Le({name}(...), Const(3))"
            )
        return self.atom()

    def atom(self) -> Atom:
        tok = self.take()
        name = tok.value
        if name[:1].isupper():
            raise self.error(f"Sponsio constructor {name!r} has no counterpart here", tok)
        if _is_number(name):
            raise self.error(f"expected a formula, found {name!r}", tok)
        if not self.at("("):
            return Atom(name, ())
        return Atom(name, self.arguments())

    def arguments(self) -> tuple[Arg, ...]:
        self.expect("(")
        out: list[Arg] = []
        if self.at(")"):
            self.take()
            return ()
        while True:
            tok = self.tok
            if tok.kind == "s":
                out.append(tok.value)
            elif tok.kind == "w":
                out.append(_number(tok.value) if _is_number(tok.value) else tok.value)
            else:
                raise self.error("expected an argument (identifier, number or quoted string)")
            self.take()
            if self.at(","):
                self.take()
                continue
            self.expect(")")
            return tuple(out)

    def term(self) -> Term:
        tok = self.tok
        if tok.kind == "s":
            self.take()
            return Str(tok.value)
        if tok.kind != "w":
            found = tok.value or "end of formula"
            raise self.error(f"expected a value, found {found!r}")
        name = tok.value
        if _is_number(name):
            self.take()
            return Num(_number(name))
        if name == "Const" and self.called():
            self.take()
            args = self.arguments()
            if len(args) != 1 or isinstance(args[0], str):
                raise self.error("Const takes one number", tok)
            return Num(args[0])
        if name == "Var" and self.called():
            self.take()
            args = self.arguments()
            if not args or not isinstance(args[0], str):
                raise self.error("Var takes a name and its arguments", tok)
            return Atom(args[0], args[1:])
        if name in TERM_ATOMS and self.called():
            self.take()
            atom_name, n = TERM_ATOMS[name]
            args = self.arguments()
            if len(args) != n:
                raise self.error(f"{name} takes {n} argument(s), got {len(args)}", tok)
            return Atom(atom_name, args)
        if name in NAMES and self.called():
            raise self.error(f"{name}(...) is a formula, not a value", tok)
        return self.atom()


def parse_constructor(text: str) -> Formula:
    """Parse Sponsio's constructor form; raise ``ParseError`` naming the column on bad input."""
    r = _Reader(text)
    if r.tok.kind == "end":
        raise r.error("empty formula")
    f = r.formula()
    if r.tok.kind != "end":
        raise r.error(f"unexpected {r.tok.value!r}")
    return f
