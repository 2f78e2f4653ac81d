"""Text syntax (SEMANTICS.md §3): printing then parsing gives the same formula."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ltl.ast import (
    Always,
    AlwaysWithin,
    And,
    Atom,
    Bool,
    Cmp,
    Eventually,
    EventuallyWithin,
    Formula,
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
    Trigger,
    Until,
    WeakUntil,
    WeakYesterday,
    Yesterday,
)
from sponsio_audit.ltl.parse import ParseError, parse, show
from tests.ltl.strategies import any_formulas

a, b, c = Atom("a"), Atom("b"), Atom("c")

names = st.sampled_from(("f", "x1", "_", "called", "Xy", "true_", "G2", "arg_has"))
tricky_text = st.text(alphabet="ab \"'\\\n,()-.1eGX_", max_size=6)
numbers = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
)
args = st.one_of(tricky_text, numbers)
odd_atoms = st.builds(Atom, names, st.lists(args, max_size=3).map(tuple))
odd_terms = st.one_of(odd_atoms, numbers.map(Num), tricky_text.map(Str))


@settings(max_examples=300, deadline=None)
@given(any_formulas(duals=True))
def test_round_trip(f: Formula) -> None:
    assert parse(show(f)) == f


@settings(max_examples=200, deadline=None)
@given(
    odd_atoms,
    st.sampled_from(("<=", "<", ">=", ">", "==", "!=")),
    odd_terms,
    odd_terms,
)
def test_round_trip_odd_names_args_and_constants(
    atom: Atom, op: str, left: object, right: object
) -> None:
    """Quoting: strings with quotes, backslashes, spaces, keywords, numbers as text."""
    g = And(Until(atom, Next(atom)), Not(Cmp(op, left, right)))  # type: ignore[arg-type]
    assert parse(show(g)) == g


PARSED = [
    ("true", Bool(True)),
    ("false", Bool(False)),
    ("called(a)", Atom("called", ("a",))),
    ("called_any()", Atom("called_any")),
    (
        "G(called(b) -> O called(a))",
        Always(Implies(Atom("called", ("b",)), Once(Atom("called", ("a",))))),
    ),
    ("count(transfer) <= 2", Cmp("<=", Atom("count", ("transfer",)), Num(2))),
    ("1.5 > arg_numeric(pay, amount)", Cmp(">", Num(1.5), Atom("arg_numeric", ("pay", "amount")))),
    ("ctx(env) == 'prod'", Cmp("==", Atom("ctx", ("env",)), Str("prod"))),
    # binding, loosest first: -> (right), |, &, U W S (right), unary
    ("a() | b() & c()", Or(a, And(b, c))),
    ("a() & b() | c()", Or(And(a, b), c)),
    ("a() -> b() -> c()", Implies(a, Implies(b, c))),
    ("a() U b() U c()", Until(a, Until(b, c))),
    ("a() W b() S c()", WeakUntil(a, Since(b, c))),
    ("a() & b() U c()", And(a, Until(b, c))),
    ("!a() U b()", Until(Not(a), b)),
    ("X a() U b()", Until(Next(a), b)),
    ("! count(a) <= 2", Not(Cmp("<=", Atom("count", ("a",)), Num(2)))),
    ("G F a()", Always(Eventually(a))),
    ("Y O[3] a()", Yesterday(OnceWithin(3, a))),
    ("H[0] a()", HistoricallyWithin(0, a)),
    ("F[1,5] a()", EventuallyWithin(1, 5, a)),
    # internal duals
    ("N a()", StrongNext(a)),
    ("Z a()", WeakYesterday(a)),
    ("a() R b()", Release(a, b)),
    ("a() T b()", Trigger(a, b)),
    ("G[0,2] a()", AlwaysWithin(0, 2, a)),
    # arguments: bare words, numbers, paths, quoted strings
    ("f(1, 2.5, -3, x, /tmp/x)", Atom("f", (1, 2.5, -3, "x", "/tmp/x"))),
    ("called(mcp__fin__Issue_Refund)", Atom("called", ("mcp__fin__Issue_Refund",))),
    ("f('bash', \"G\")", Atom("f", ("bash", "G"))),
    # escapes: \\ and an escaped quote are unescaped, any other backslash is kept
    (r'arg_has(bash, "rm\\s+-rf")', Atom("arg_has", ("bash", r"rm\s+-rf"))),
    (r'arg_has(bash, "rm\s+-rf")', Atom("arg_has", ("bash", r"rm\s+-rf"))),
    (r'f("a\\s")', Atom("f", ("a\\s",))),
    (r'f("a\\\\s")', Atom("f", ("a\\\\s",))),
    (r'f("say \"hi\"")', Atom("f", ('say "hi"',))),
    (r"f('it\'s')", Atom("f", ("it's",))),
    (r'f("a\'b")', Atom("f", ("a'b",))),
    (r'f("\d+")', Atom("f", ("\\d+",))),
]


@pytest.mark.parametrize(("text", "expected"), PARSED)
def test_parse_by_hand(text: str, expected: Formula) -> None:
    assert parse(text) == expected


def test_three_char_string() -> None:
    atom = parse(r'f("a\\s")')
    assert isinstance(atom, Atom) and len(str(atom.args[0])) == 3


ERRORS = [
    ("", "empty formula", 1),
    ("G (called(a) &", "expected a formula", 15),
    ("called(a) $ b", "unexpected character '$'", 11),
    ("F[3,1] a()", "empty window [3,1]", 1),
    ("G a", "expected '(' after atom name 'a'", 4),
    ("a(x) b(y)", "unexpected 'b'", 6),
    ("count(a) <= ", "expected a formula", 13),
    ("O[x] a()", "expected a bound", 3),
    ("3", "expected a comparison operator", 2),
    ("(a()", "expected ')'", 5),
    ("a(,)", "expected an argument", 3),
    ("a() U", "expected a formula", 6),
    ("called(G)", None, None),  # a keyword as a bare argument is fine
]


@pytest.mark.parametrize(("text", "message", "column"), ERRORS)
def test_parse_errors_name_the_column(text: str, message: str | None, column: int | None) -> None:
    if message is None:
        parse(text)
        return
    with pytest.raises(ParseError) as err:
        parse(text)
    assert message in err.value.message
    assert err.value.column == column
    assert f"column {column}" in str(err.value)
