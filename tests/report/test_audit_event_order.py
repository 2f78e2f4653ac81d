"""``api.audit`` reads the events as stored when they are in (trace_id, seq) order, and sorted
otherwise: the verdicts and violations are the same either way, row for row."""

from __future__ import annotations

import pyarrow as pa

from sponsio_audit import api
from sponsio_audit.config import load_config
from sponsio_audit.ingest import Store, ingest
from sponsio_audit.ingest.tables import TABLES
from tests.report.conftest import CONFIG, TRACES


def _stored(order: str) -> Store:
    """The demo corpus ingested, then copied into a new store with the events inserted in
    ``order`` (SQL)."""
    first = Store.open(None)
    ingest([str(TRACES)], first)
    second = Store.open(None)
    for name in TABLES:
        table = first.con.sql(f'SELECT * FROM "{name}"').to_arrow_table()
        if name == "events":
            first.con.register("_all", table)
            table = first.con.sql(f"SELECT * FROM _all ORDER BY {order}").to_arrow_table()
        if table.num_rows:
            second.insert(name, table)
    first.close()
    return second


def _keys(store: Store) -> list[tuple[str, int]]:
    rows = store.con.execute("SELECT trace_id, seq FROM events").fetchall()
    return [(str(t), int(s)) for t, s in rows]


def _result(store: Store) -> tuple[pa.Table, pa.Table]:
    result = api.audit(store, load_config(CONFIG))
    return result.verdicts, result.violations


def test_stored_order_or_not_the_same_tables() -> None:
    ordered, shuffled = _stored("trace_id, seq"), _stored("hash(trace_id, seq)")
    assert _keys(ordered) == sorted(_keys(ordered))
    assert _keys(shuffled) != sorted(_keys(shuffled)), "the copy must be out of order"
    assert sorted(_keys(shuffled)) == _keys(ordered)
    want_verdicts, want_violations = _result(ordered)
    got_verdicts, got_violations = _result(shuffled)
    assert want_violations.num_rows > 0, "the demo corpus plants violations"
    assert got_verdicts.to_pylist() == want_verdicts.to_pylist()
    assert got_violations.to_pylist() == want_violations.to_pylist()


def test_reversed_steps_of_one_trace_are_read_sorted() -> None:
    """Out of order only inside a trace (seq descending): the same tables."""
    ordered, backwards = _stored("trace_id, seq"), _stored("trace_id, seq DESC")
    assert _keys(backwards) != sorted(_keys(backwards))
    assert [r.to_pylist() for r in _result(backwards)] == [r.to_pylist() for r in _result(ordered)]
