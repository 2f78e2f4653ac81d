"""A ``<redacted>`` argument value is a value the trace did not record (SEMANTICS.md §2).

Sponsio's exporter, and the guard's own, replace every secret-looking value by
``<redacted>``. Read as recorded text, ``bash {"command": "<redacted>"}`` passed a
blacklist on ``rm -rf``. The rule checked here is §2's definition itself, not
another evaluator: an atom that is true or false on args holding hidden values
must have that value whatever was hidden, so every way of filling them in is
tried against it. The columnar grounding and the guard are held to the online
grounder on the same strategies (``test_equivalence``, ``tests/guard/test_fast``).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.atoms.online import Grounder
from sponsio_audit.event import Event
from sponsio_audit.ltl.ast import Atom
from sponsio_audit.redact import REDACTED

from .helpers import call, values_of
from .strategies import ALL_ATOMS, JSONV, KEYS

H = REDACTED
FILLS = st.one_of(
    JSONV.filter(lambda v: REDACTED not in json.dumps(v)),
    st.sampled_from(["rm -rf /data/x", "/etc/passwd", "/data/ok", "admin", "5000", 5000, ""]),
)
HIDING = st.dictionaries(KEYS, st.one_of(st.just(H), JSONV, st.just({"b": H})), max_size=3)


def _fill(v: Any, fills: list[Any]) -> Any:
    if v == REDACTED:
        return fills.pop() if fills else ""
    if isinstance(v, dict):
        return {k: _fill(x, fills) for k, x in v.items()}
    if isinstance(v, list):
        return [_fill(x, fills) for x in v]
    return v


def _at(atoms: tuple[Atom, ...], tool: str, args: Any) -> dict[Atom, Any]:
    return Grounder(atoms).ground(Event("tool_call", tool=tool, args=args, agent="a"))


@settings(max_examples=150)
@given(
    ALL_ATOMS,
    st.sampled_from(["bash", "issue_refund", "read_file"]),
    HIDING,
    st.lists(st.lists(FILLS, min_size=4, max_size=4), min_size=1, max_size=3),
)
def test_a_known_value_holds_whatever_was_hidden(
    atoms: tuple[Atom, ...], tool: str, args: dict[str, Any], fillings: list[list[Any]]
) -> None:
    hidden = _at(atoms, tool, args)
    for fills in fillings:
        filled = _at(atoms, tool, _fill(args, list(fills)))
        for a, v in hidden.items():
            if v is not None:
                assert filled[a] == v, (a, args, fills)


CTX_ATOMS = st.tuples(
    st.builds(Atom, st.just("ctx"), st.tuples(KEYS, st.sampled_from(["prod", "5", 5, H]))),
    st.builds(Atom, st.just("ctx_matches"), st.tuples(KEYS, st.sampled_from(["^p", "x", "5"]))),
    st.builds(Atom, st.just("ctx_value"), st.tuples(KEYS)),
)


def _after_update(atoms: tuple[Atom, ...], update: dict[str, Any]) -> dict[Atom, Any]:
    g = Grounder(atoms)
    g.ground(Event("context_update", args=update, agent="a"))
    return g.ground(Event("tool_call", tool="deploy", args={}, agent="a"))


@settings(max_examples=150)
@given(
    CTX_ATOMS,
    HIDING,
    st.lists(st.lists(FILLS, min_size=4, max_size=4), min_size=1, max_size=3),
)
def test_a_known_context_value_holds_whatever_was_hidden(
    atoms: tuple[Atom, ...], update: dict[str, Any], fillings: list[list[Any]]
) -> None:
    """The same rule for the values a context_update records (ctx, ctx_matches, ctx_value)."""
    hidden = _after_update(atoms, update)
    for fills in fillings:
        filled = _after_update(atoms, _fill(update, list(fills)))
        for a, v in hidden.items():
            if v is not None:
                assert filled[a] == v, (a, update, fills)


def test_a_redacted_context_value_is_unverifiable_not_a_mismatch() -> None:
    # "deploy only in staging": env hidden by the exporter may have been prod
    env = Atom("ctx", ("env", "prod"))
    assert _after_update((env,), {"env": H})[env] is None
    assert _after_update((env,), {"env": "staging", "token": H})[env] is False
    assert _after_update((env,), {"env": {"name": H}})[env] is None


def test_a_redacted_command_is_unverifiable_not_clean() -> None:
    # the hunt's case: the guard redacted a command that held a token
    trace = [call("bash", {"command": H}), call("bash", {"command": "ls", "api_key": H})]
    rx = r"rm\s+-rf"
    assert values_of(Atom("arg_field_has", ("bash", "command", rx)), trace) == [None, False]
    assert values_of(Atom("arg_has", ("bash", rx)), trace) == [None, None]
    assert values_of(Atom("arg_has", ("bash", "ls")), trace) == [None, True]
    assert values_of(Atom("arg_eq", ("bash", "command", "ls")), trace) == [None, True]
    assert values_of(Atom("arg_length", ("bash", "command")), trace) == [None, 2]
    # what the recorded rest proves stands: a path outside the prefixes is outside
    outside = [call("bash", {"path": "/etc/passwd", "token": H})]
    assert values_of(Atom("arg_paths_within", ("bash", "/data")), outside) == [False]
    inside = [call("bash", {"path": "/data/x", "token": H})]
    assert values_of(Atom("arg_paths_within", ("bash", "/data")), inside) == [None]


def test_args_recorded_as_text_that_is_not_json_hide_their_fields() -> None:
    # a Python repr, or JSON an exporter cut short, is wrapped as {"input": text}: its
    # fields were false, so arg_blacklist(bash, command, rm -rf) passed a repr of rm -rf
    trace = [
        call("bash", {"input": "{'command': 'rm -rf /'}"}),
        call("bash", {"input": '{"command": "ls", "path": "/da (+1.2 KB truncated)'}),
        call("bash", {"input": "ls -la"}),  # plain text: its only field is input
        call("bash", {"input": '{"command": "ls"}'}),  # JSON text held as a string: as is
    ]
    field = Atom("arg_field_has", ("bash", "command", r"rm\s+-rf"))
    assert values_of(field, trace) == [None, None, False, False]
    assert values_of(Atom("arg_eq", ("bash", "command", "ls")), trace) == [None, None, F, F]
    assert values_of(Atom("arg_has", ("bash", r"rm\s+-rf")), trace) == [True, None, F, F]
    assert values_of(Atom("arg_field_has", ("bash", "input", "ls")), trace)[:3] == [F, T, T]
    # a path in the text outside the prefixes proves false; inside, the object may hold more
    within = Atom("arg_paths_within", ("bash", "/data"))
    assert values_of(within, [call("bash", {"input": "{'path': '/data/x'}"})]) == [None]
    assert values_of(within, trace)[0] is F


F, T = False, True
