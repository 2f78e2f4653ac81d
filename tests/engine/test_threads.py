"""The columnar engine on several threads gives the reference's verdicts, in the same order
as on one (``sponsio_audit.threads``; SEMANTICS.md §4.2 verdicts, §5 regex time limits)."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest
from hypothesis import given, settings

from sponsio_audit.atoms.columns import Columns
from sponsio_audit.engine import columnar_raw, reference_raw
from sponsio_audit.evaluation import ContractSet, evaluate
from sponsio_audit.ltl.contract import Clause, Contract
from sponsio_audit.ltl.parse import parse
from sponsio_audit.threads import MIN_ROWS, resolve
from sponsio_audit.verdicts import build_tables
from tests.engine.test_engines import CONTRACTS, PERMS, TRACES, _key, _table


@settings(max_examples=60)
@given(TRACES)
def test_threads_give_the_reference_verdicts_in_one_order(traces):
    events = _table(traces)
    ref = build_tables(reference_raw(events, CONTRACTS, PERMS), events, CONTRACTS)
    one = columnar_raw(events, CONTRACTS, PERMS, threads=1)
    for n in (2, 3):
        many = columnar_raw(events, CONTRACTS, PERMS, threads=n)
        assert many.to_pylist() == one.to_pylist()  # rows in the same order, not only the same
        col = build_tables(many, events, CONTRACTS)
        assert _key(col[0]) == _key(ref[0])
        assert _key(col[1]) == _key(ref[1])


def test_an_error_on_a_thread_reaches_the_caller():
    events = _table([[(("tool_call", "bash", {"cmd": "ls"}), "bot")]])
    bad = Contract("bad", "*", (Clause(parse("G !called_with(bash, '(unclosed')")),))
    contracts = (*CONTRACTS, bad)
    for n in (1, 4):  # the same error, from whichever thread grounded the atom
        with pytest.raises(ValueError, match=r"invalid RE2 regex '\(unclosed'"):
            evaluate(events, ContractSet(contracts, PERMS), threads=n)


def test_timeouts_on_threads_are_all_counted():
    """Each backtracking search that runs out of time counts once, whichever thread ran it."""
    from sponsio_audit import regexes

    slow = r"^(?=(a|a)*b)"  # exponential backtracking on a run of a's without a b
    events = _table(
        [[(("tool_call", "bash", {"cmd": "a" * (26 + t) + "!"}), "bot")] for t in range(4)]
    )
    contracts = tuple(
        Contract(f"slow{k}", "*", (Clause(parse(f"G !arg_field_has(bash, cmd, '{slow}{k}?')")),))
        for k in range(6)
    )
    counted = {}
    for n in (1, 3):
        with regexes.time_limit(0.001) as searches:
            out = evaluate(events, ContractSet(contracts, {}), threads=n)
        counted[n] = searches.timeouts
        verdicts = out.verdicts.column("verdict").to_pylist()
        assert verdicts == ["unverifiable"] * 24  # never a pass for want of time
    assert counted[3] == counted[1] >= 24  # at least 6 regexes x 4 distinct commands


def test_a_shared_column_is_made_once_however_many_threads_ask():
    cols = Columns(pa.table({"trace_id": ["t"] * 3, "type": ["tool_call"] * 3}))
    made, start = [], threading.Barrier(8)

    def make() -> object:
        made.append(1)
        time.sleep(0.05)  # long enough for every other thread to ask meanwhile
        return object()

    def ask() -> None:
        start.wait()
        got.append(cols.cached("key", make))

    got: list[object] = []

    workers = [threading.Thread(target=ask) for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(made) == 1
    assert all(x is got[0] for x in got)  # columns sharing codes must share the one array


def test_auto_threads():
    assert resolve(0, MIN_ROWS - 1) == 1
    assert 1 <= resolve(0, MIN_ROWS) <= 4
    assert resolve(3, 10) == 3
    with pytest.raises(ValueError, match="threads"):
        resolve(-1, 10)
