"""Sponsio's constructor form (ARCHITECTURE.md "Configuration compatibility") parses to
the same formula as the infix form of the same meaning."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ltl.ast import (
    Always,
    And,
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
    Until,
)
from sponsio_audit.ltl.parse import ParseError, parse, show

# (constructor text, infix text written by hand with the same meaning)
PAIRS = [
    (
        "G(Implies(called(modify_pending_order_items), Eq(ArgLength(modify_pending_order_items,"
        " item_ids), ArgLength(modify_pending_order_items, new_item_ids))))",
        "G(called(modify_pending_order_items) -> arg_length(modify_pending_order_items, item_ids)"
        " == arg_length(modify_pending_order_items, new_item_ids))",
    ),
    (
        "G(Implies(called(book_reservation), Le(ArgLength(book_reservation, passengers),"
        " Const(5))))",
        "G(called(book_reservation) -> arg_length(book_reservation, passengers) <= 5)",
    ),
    ("G(Not(called(a)))", "G !called(a)"),
    (
        "Or(U(Not(called(b)), called(a)), G(Not(called(b))))",
        "(!called(b) U called(a)) | G !called(b)",
    ),
    (
        "G(And(Le(Var(count, x), Const(2)), Ge(Var(count, x), 0)))",
        "G(count(x) <= 2 & count(x) >= 0)",
    ),
    ("G(Implies(called(a), X(F(called(b)))))", "G(called(a) -> X F called(b))"),
    ("G(Lt(Var(token_count, total), Const(10.5)))", "G(token_count(total) < 10.5)"),
    ("G(Gt(count(a), 1))", "G(count(a) > 1)"),
    ("G(Not(arg_has(bash, 'rm\\s+-rf')))", 'G !arg_has(bash, "rm\\s+-rf")'),
    (
        'G(Not(arg_field_has(bash, command, "a,b (c)")))',
        'G !arg_field_has(bash, command, "a,b (c)")',
    ),
    ("G(Not(done))", "G !done()"),
    ("G(Implies(true, called_any()))", "G(true -> called_any())"),
    ("F(called(submit))", "F called(submit)"),
    (
        "G(Implies(called(p), Not(Eq(ArgValue(p, m), CtxValue(o)))))",
        "G(called(p) -> !(arg_value(p, m) == ctx_value(o)))",
    ),
    ("G(Eq(CtxValue(o), Const(1)))", "G(ctx_value(o) == 1)"),
    ("G(Eq(ArgValue(t, f), 'pm_1'))", "G(arg_value(t, f) == 'pm_1')"),
]


@pytest.mark.parametrize(("ctor", "infix"), PAIRS)
def test_constructor_form_equals_infix(ctor: str, infix: str) -> None:
    assert parse(ctor) == parse(infix)


def test_tau2_bench_formula_has_the_expected_tree() -> None:
    """The AST itself, written out by hand, not only equal to the infix reading."""
    t = "modify_pending_order_items"
    f = parse(
        f"G(Implies(called({t}), Eq(ArgLength({t}, item_ids), ArgLength({t}, new_item_ids))))"
    )
    assert f == Always(
        Implies(
            Atom("called", (t,)),
            Cmp("==", Atom("arg_length", (t, "item_ids")), Atom("arg_length", (t, "new_item_ids"))),
        )
    )


def test_tau2_bench_payment_formula_has_the_expected_tree() -> None:
    """Sponsio's ArgValue/CtxValue are the value atoms arg_value/ctx_value, compared."""
    t = "modify_pending_order_payment"
    f = parse(
        f"G(Implies(called({t}), Not(Eq(ArgValue({t}, payment_method_id), "
        "CtxValue(original_pm_id)))))"
    )
    value, ctx = Atom("arg_value", (t, "payment_method_id")), Atom("ctx_value", ("original_pm_id",))
    assert f == Always(Implies(Atom("called", (t,)), Not(Cmp("==", value, ctx))))


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("G(Le(UnaryFn(len, ArgValue(a, b)), Const(3)))", "UnaryFn"),
        ("G(Subset(a, b))", "Subset"),
        ("G(Implies(called(a), Frobnicate(called(b))))", "Frobnicate"),
    ],
)
def test_constructor_without_counterpart_is_an_error_naming_it(text: str, name: str) -> None:
    with pytest.raises(ParseError) as e:
        parse(text)
    assert name in e.value.message


@pytest.mark.parametrize(
    "text",
    [
        "G(Implies(called(a), Const(3)))",  # a value where a formula belongs
        "G(Le(called(a), Not(called(b))))",  # a formula where a value belongs
        "G(Implies(called(a)",  # unclosed
        "G(Implies(called(a), called(b), called(c)))",  # three arguments
        "Le(Const(x), 3)",  # Const of a name
    ],
)
def test_malformed_constructor_forms_are_errors(text: str) -> None:
    with pytest.raises(ParseError):
        parse(text)


# ------------------------------------------------------------- property

_ATOMS = (Atom("called", ("a",)), Atom("called", ("b",)), Atom("arg_has", ("bash", "rm -rf")))
_TERMS = (Atom("count", ("a",)), Atom("arg_length", ("t", "f")), Num(3), Num(0))


def _leaves() -> st.SearchStrategy[Formula]:
    cmp = st.builds(
        Cmp,
        st.sampled_from(("<=", "<", ">=", ">", "==")),
        st.sampled_from(_TERMS),
        st.sampled_from(_TERMS),
    )
    return st.one_of(st.sampled_from(_ATOMS), cmp, st.sampled_from((Bool(True), Bool(False))))


def _formulas() -> st.SearchStrategy[Formula]:
    return st.recursive(
        _leaves(),
        lambda sub: st.one_of(
            st.builds(Not, sub),
            st.builds(Always, sub),
            st.builds(Eventually, sub),
            st.builds(Next, sub),
            st.builds(And, sub, sub),
            st.builds(Or, sub, sub),
            st.builds(Implies, sub, sub),
            st.builds(Until, sub, sub),
        ),
        max_leaves=12,
    )


def _term_text(t: object) -> str:
    match t:
        case Num(v):
            return f"Const({v})"
        case Str(v):
            return repr(v)
        case Atom("arg_length", (tool, field)):
            return f"ArgLength({tool}, {field})"
        case Atom(name, args):
            return f"Var({', '.join([name, *map(str, args)])})"
    raise TypeError(t)


_CMP_NAME = {"<=": "Le", "<": "Lt", ">=": "Ge", ">": "Gt", "==": "Eq"}
_NODE_NAME = {Not: "Not", Always: "G", Eventually: "F", Next: "X", And: "And", Or: "Or",
              Implies: "Implies", Until: "U"}  # fmt: skip


def _ctor_text(f: Formula) -> str:
    """Sponsio's constructor spelling of ``f`` (a printer written for this test)."""
    match f:
        case Bool(v):
            return "true" if v else "false"
        case Atom(name, args):
            quoted = ", ".join(f"'{a}'" if " " in str(a) else str(a) for a in args)
            return f"{name}({quoted})"
        case Cmp(op, left, right):
            return f"{_CMP_NAME[op]}({_term_text(left)}, {_term_text(right)})"
        case Not(a) | Always(a) | Eventually(a) | Next(a):
            return f"{_NODE_NAME[type(f)]}({_ctor_text(a)})"
        case And(l, r) | Or(l, r) | Implies(l, r) | Until(l, r):
            return f"{_NODE_NAME[type(f)]}({_ctor_text(l)}, {_ctor_text(r)})"
    raise TypeError(f)


@settings(max_examples=150, deadline=None)
@given(_formulas())
def test_any_constructor_formula_parses_to_its_tree(f: Formula) -> None:
    assert parse(_ctor_text(f)) == f
    assert parse(show(f)) == f  # and the infix form of the same tree agrees
