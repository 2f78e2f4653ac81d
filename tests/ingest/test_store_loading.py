"""``Store.loading``: ingest's inserts as few DuckDB transactions, with the same table contents."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from sponsio_audit.ingest.store import COMMIT_ROWS, Buffer, Store
from sponsio_audit.ingest.tables import TRACES_SCHEMA


def _traces(n: int, start: int = 0) -> pa.RecordBatch:
    ids = [f"t{i:07d}" for i in range(start, start + n)]
    return pa.RecordBatch.from_arrays(
        [pa.array(ids), pa.array(range(start, start + n), pa.int64())], schema=TRACES_SCHEMA
    )


def _threads(store: Store) -> int:
    return int(store.con.execute("SELECT current_setting('threads')").fetchall()[0][0])


@pytest.mark.parametrize("where", ["memory", "file"])
def test_rows_over_several_commits_keep_their_order(tmp_path: Path, where: str) -> None:
    store = Store.open(None if where == "memory" else tmp_path / "s.duckdb")
    n = 2 * COMMIT_ROWS + 1234  # at least two commits inside, and a tail
    buf = Buffer(store, "traces", batch_rows=50_000)
    with store.loading():
        for start in range(0, n, 7_000):
            buf.add_batch(_traces(min(7_000, n - start), start))
        buf.flush()
    assert buf.total == n
    # insertion order (what a scan without ORDER BY returns) is the order rows came in
    got = store.con.execute("SELECT events FROM traces").fetchnumpy()["events"]
    assert got.tolist() == list(range(n))
    by_rowid = store.con.execute("SELECT trace_id FROM traces ORDER BY rowid").fetchall()
    assert by_rowid[0] == ("t0000000",) and by_rowid[-1] == (f"t{n - 1:07d}",)
    store.close()
    if where == "file":
        again = Store.open(tmp_path / "s.duckdb")
        assert again.count("traces") == n
        again.close()


def test_another_cursor_sees_rows_once_committed() -> None:
    # pass 2 of ingest reads span_facts through a cursor of its own: commit() publishes rows
    store = Store.open(None)
    cur = store.con.cursor()
    with store.loading():
        store.insert("traces", _traces(10))
        assert store.count("traces") == 10  # the loading connection sees its own rows
        assert cur.execute("SELECT count(*) FROM traces").fetchall() == [(0,)]
        store.commit()
        assert cur.execute("SELECT count(*) FROM traces").fetchall() == [(10,)]
        store.insert("traces", _traces(5, 10))
    assert cur.execute("SELECT count(*) FROM traces").fetchall() == [(15,)]
    cur.close()


def test_failure_inside_rolls_back_and_restores_threads() -> None:
    store = Store.open(None)
    store.con.execute("SET threads = 2")
    with store.loading():
        assert _threads(store) == 1  # one thread while loading: no ordered merge of two
        store.insert("traces", _traces(3))
    with pytest.raises(RuntimeError, match="midway"), store.loading():
        store.insert("traces", _traces(4, 3))
        raise RuntimeError("midway")
    assert _threads(store) == 2
    assert store.count("traces") == 3  # the rows since the last commit are not kept
    with store.loading():  # the store is usable afterwards
        store.insert("traces", _traces(2, 3))
    assert store.count("traces") == 5
    store.close()


def test_an_insert_that_fails_on_the_writer_thread_fails_the_load() -> None:
    # inserts run on the writer thread: its error must reach the caller, never be lost
    store = Store.open(None)
    with store.loading():
        store.insert("traces", _traces(3))
    with pytest.raises(duckdb.Error, match="nope"), store.loading():
        store.insert("traces", pa.table({"nope": [1]}))  # no such column
        store.insert("traces", _traces(4, 3))  # put after the failure: not run
        store.count("traces")  # the connection is used only once the inserts ran
    assert store.count("traces") == 3  # nothing of the failed load is kept
    with store.loading():  # and the store is usable afterwards
        store.insert("traces", _traces(2, 3))
    assert store.count("traces") == 5
    store.close()
