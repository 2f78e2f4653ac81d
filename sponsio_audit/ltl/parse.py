"""Text syntax of formulas (SEMANTICS.md §3): ``parse`` and ``show``.

``parse(show(f)) == f`` for every formula, internal duals included (they
print as ``N Z R T G[a,b]``). Binding, loosest first: ``->`` (right-assoc),
``|``, ``&``, ``U W S R T`` (right-assoc), unary, comparisons. In string
literals ``\\\\`` and an escaped quote are unescaped; any other backslash
is kept, so regexes written in YAML read as their authors meant.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sponsio_audit.ltl.ast import (
    CMP_OPS,
    Always,
    AlwaysWithin,
    And,
    Arg,
    Atom,
    Bool,
    Cmp,
    Eventually,
    EventuallyWithin,
    Formula,
    Historically,
    HistoricallyWithin,
    Implies,
    Next,
    Not,
    Num,
    Once,
    OnceWithin,
    Or,
    Release,
    Since,
    Str,
    StrongNext,
    Term,
    Trigger,
    Until,
    WeakUntil,
    WeakYesterday,
    Yesterday,
)

UNARY_OPS: dict[str, Callable[[Formula], Formula]] = {
    "X": Next,
    "F": Eventually,
    "G": Always,
    "Y": Yesterday,
    "O": Once,
    "H": Historically,
    "N": StrongNext,
    "Z": WeakYesterday,
}
BINARY_OPS: dict[str, Callable[[Formula, Formula], Formula]] = {
    "U": Until,
    "W": WeakUntil,
    "S": Since,
    "R": Release,
    "T": Trigger,
}
KEYWORDS = set(UNARY_OPS) | set(BINARY_OPS) | {"true", "false"}


MAX_INT = 2**53
"""The largest whole number a formula may hold (a window bound, a constant): counters and
durations are compared as float64 columns, exact up to 2**53, and a sum past int64 wraps
(a deadline of 2**63 - 1 gave false violations, larger ones a traceback)."""


class ParseError(ValueError):
    """A formula that does not parse; ``column`` is 1-based."""

    def __init__(self, message: str, text: str, column: int) -> None:
        self.message = message
        self.text = text
        self.column = column
        super().__init__(f"{message} at column {column}: {text!r}")


@dataclass(frozen=True)
class _Tok:
    kind: str  # op, ident, num, str, bare, end
    value: str
    col: int  # 0-based


_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<op>->|<=|>=|==|!=|<|>|[!&|()\[\],])
  | (?P<num>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![A-Za-z_]))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    """,
    re.VERBOSE,
)
# inside an atom's argument list anything up to , or ) is a bare argument
_BARE = re.compile(r"""[^\s,()"']+""")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _unescape(body: str) -> str:
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] in "\\\"'":
            out.append(body[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.tok = self._next(args=False)

    def error(self, message: str, col: int | None = None) -> ParseError:
        return ParseError(message, self.text, (self.tok.col if col is None else col) + 1)

    def _next(self, *, args: bool) -> _Tok:
        text = self.text
        while True:
            if self.pos >= len(text):
                return _Tok("end", "", len(text))
            start = self.pos
            if args and (bare := _BARE.match(text, start)):
                self.pos = bare.end()
                return _Tok("bare", bare.group(), start)
            m = _TOKEN.match(text, start)
            if m is None:
                raise ParseError(f"unexpected character {text[start]!r}", text, start + 1)
            self.pos = m.end()
            kind = m.lastgroup or ""
            if kind == "ws":
                continue
            if kind == "str":
                return _Tok("str", _unescape(m.group()[1:-1]), start)
            return _Tok(kind, m.group(), start)

    def advance(self, *, args: bool = False) -> _Tok:
        tok = self.tok
        self.tok = self._next(args=args)
        return tok

    def expect(self, value: str, *, args: bool = False) -> _Tok:
        if self.tok.kind != "op" or self.tok.value != value:
            found = self.tok.value or "end of formula"
            raise self.error(f"expected {value!r}, found {found!r}")
        return self.advance(args=args)

    def at_op(self, *values: str) -> bool:
        return self.tok.kind == "op" and self.tok.value in values

    # grammar -------------------------------------------------------------

    def formula(self) -> Formula:
        left = self.disjunction()
        if self.at_op("->"):
            self.advance()
            return Implies(left, self.formula())
        return left

    def disjunction(self) -> Formula:
        left = self.conjunction()
        while self.at_op("|"):
            self.advance()
            left = Or(left, self.conjunction())
        return left

    def conjunction(self) -> Formula:
        left = self.binary()
        while self.at_op("&"):
            self.advance()
            left = And(left, self.binary())
        return left

    def binary(self) -> Formula:
        left = self.unary()
        if self.tok.kind == "ident" and self.tok.value in BINARY_OPS:
            node = BINARY_OPS[self.advance().value]
            return node(left, self.binary())
        return left

    def bound(self) -> int:
        tok = self.tok
        if tok.kind != "num" or not tok.value.isdigit():
            raise self.error("expected a bound (a whole number ≥ 0)")
        self.advance()
        n = int(tok.value)
        if n > MAX_INT:
            raise self.error(f"bound too large (at most {MAX_INT:,})", tok.col)
        return n

    def unary(self) -> Formula:
        tok = self.tok
        if self.at_op("!"):
            self.advance()
            return Not(self.unary())
        if tok.kind == "ident" and tok.value in UNARY_OPS:
            self.advance()
            if self.at_op("[") and tok.value in "OHFG":
                self.advance()
                a = self.bound()
                if tok.value in "OH":
                    self.expect("]")
                    arg = self.unary()
                    return OnceWithin(a, arg) if tok.value == "O" else HistoricallyWithin(a, arg)
                self.expect(",")
                b = self.bound()
                if b < a:
                    raise self.error(f"empty window [{a},{b}]", tok.col)
                self.expect("]")
                arg = self.unary()
                return EventuallyWithin(a, b, arg) if tok.value == "F" else AlwaysWithin(a, b, arg)
            return UNARY_OPS[tok.value](self.unary())
        return self.primary()

    def primary(self) -> Formula:
        tok = self.tok
        if self.at_op("("):
            self.advance()
            inner = self.formula()
            self.expect(")")
            return inner
        if tok.kind == "ident" and tok.value in ("true", "false"):
            self.advance()
            return Bool(tok.value == "true")
        left = self.term()
        if self.tok.kind == "op" and self.tok.value in CMP_OPS:
            op = self.advance().value
            return Cmp(op, left, self.term())
        if isinstance(left, Atom):
            return left
        raise self.error("expected a comparison operator after a constant")

    def term(self) -> Term:
        tok = self.tok
        if tok.kind == "num":
            self.advance()
            n = _number(tok.value)
            if isinstance(n, int) and abs(n) > MAX_INT:
                raise self.error(f"number too large (at most {MAX_INT:,} either way)", tok.col)
            return Num(n)
        if tok.kind == "str":
            self.advance()
            return Str(tok.value)
        if tok.kind == "ident":
            if tok.value in KEYWORDS:
                raise self.error(f"{tok.value!r} is an operator, not an atom")
            self.advance()
            if not self.at_op("("):
                raise self.error(f"expected '(' after atom name {tok.value!r}")
            return Atom(tok.value, self.arguments())
        found = tok.value or "end of formula"
        raise self.error(f"expected a formula, found {found!r}")

    def arguments(self) -> tuple[Arg, ...]:
        self.expect("(", args=True)
        out: list[Arg] = []
        if self.at_op(")"):
            self.advance()
            return ()
        while True:
            tok = self.tok
            if tok.kind == "str":
                out.append(tok.value)
            elif tok.kind == "num":
                out.append(_number(tok.value))
            elif tok.kind in ("bare", "ident"):
                out.append(_number(tok.value) if _is_number(tok.value) else tok.value)
            else:
                raise self.error("expected an argument (identifier, number or quoted string)")
            self.advance()
            if self.at_op(","):
                self.advance(args=True)
                continue
            self.expect(")")
            return tuple(out)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\Z")


def _is_number(s: str) -> bool:
    return bool(_NUMBER.match(s))


def _number(s: str) -> int | float:
    return float(s) if ("." in s or "e" in s or "E" in s) else int(s)


def parse(text: str) -> Formula:
    """Parse a formula, infix or Sponsio's constructor form (``ltl.constructor``);
    raise ``ParseError`` naming the column on bad input."""
    from sponsio_audit.ltl import constructor  # it builds on this module's tokens

    try:
        f = _parse_infix(text)
    except ParseError as infix_error:
        try:
            return constructor.parse_constructor(text)
        except ParseError:
            if constructor.looks_constructor(text):
                raise
            raise infix_error from None
    return constructor.parse_constructor(text) if constructor.names_constructor(f) else f


def _parse_infix(text: str) -> Formula:
    p = _Parser(text)
    if p.tok.kind == "end":
        raise p.error("empty formula")
    f = p.formula()
    if p.tok.kind != "end":
        raise p.error(f"unexpected {p.tok.value!r}")
    return f


# ---------------------------------------------------------------- printing

_LEVEL_IMPLIES, _LEVEL_OR, _LEVEL_AND, _LEVEL_BIN, _LEVEL_UNARY = range(5)


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _show_arg(a: Arg) -> str:
    if isinstance(a, str):
        if _IDENT.match(a) and a not in KEYWORDS:
            return a
        return _quote(a)
    return repr(a)


def _show_term(t: Term) -> str:
    match t:
        case Num(v):
            return repr(v)
        case Str(v):
            return _quote(v)
        case Atom(name, args):
            return f"{name}({', '.join(_show_arg(a) for a in args)})"
    raise TypeError(f"not a term: {t!r}")


def _level(f: Formula) -> int:
    match f:
        case Implies():
            return _LEVEL_IMPLIES
        case Or():
            return _LEVEL_OR
        case And():
            return _LEVEL_AND
        case Until() | WeakUntil() | Since() | Release() | Trigger():
            return _LEVEL_BIN
    return _LEVEL_UNARY


def _wrap(f: Formula, min_level: int) -> str:
    s = show(f)
    return s if _level(f) >= min_level else f"({s})"


_BIN_SYMBOL = {Until: "U", WeakUntil: "W", Since: "S", Release: "R", Trigger: "T"}
_UNARY_SYMBOL: dict[object, str] = {v: k for k, v in UNARY_OPS.items()}


def show(f: Formula) -> str:
    """The text form of ``f``, with the fewest parentheses that parse back to ``f``."""
    match f:
        case Bool(v):
            return "true" if v else "false"
        case Atom():
            return _show_term(f)
        case Cmp(op, left, right):
            return f"{_show_term(left)} {op} {_show_term(right)}"
        case Not(a):
            return "!" + _wrap(a, _LEVEL_UNARY)
        case Implies(l, r):
            return f"{_wrap(l, _LEVEL_OR)} -> {_wrap(r, _LEVEL_IMPLIES)}"
        case Or(l, r):
            return f"{_wrap(l, _LEVEL_OR)} | {_wrap(r, _LEVEL_AND)}"
        case And(l, r):
            return f"{_wrap(l, _LEVEL_AND)} & {_wrap(r, _LEVEL_BIN)}"
        case Until(l, r) | WeakUntil(l, r) | Since(l, r) | Release(l, r) | Trigger(l, r):
            sym = _BIN_SYMBOL[type(f)]
            return f"{_wrap(l, _LEVEL_UNARY)} {sym} {_wrap(r, _LEVEL_BIN)}"
        case OnceWithin(k, a):
            return f"O[{k}] {_wrap(a, _LEVEL_UNARY)}"
        case HistoricallyWithin(k, a):
            return f"H[{k}] {_wrap(a, _LEVEL_UNARY)}"
        case EventuallyWithin(lo, hi, a):
            return f"F[{lo},{hi}] {_wrap(a, _LEVEL_UNARY)}"
        case AlwaysWithin(lo, hi, a):
            return f"G[{lo},{hi}] {_wrap(a, _LEVEL_UNARY)}"
        case (
            Next(a)
            | Eventually(a)
            | Always(a)
            | Yesterday(a)
            | Once(a)
            | Historically(a)
            | StrongNext(a)
            | WeakYesterday(a)
        ):
            inner = _wrap(a, _LEVEL_UNARY)
            sep = "" if inner.startswith("(") else " "
            return f"{_UNARY_SYMBOL[type(f)]}{sep}{inner}"
    raise TypeError(f"not a formula: {f!r}")
