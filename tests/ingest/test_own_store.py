"""A store's own database files are never read as traces, when the inputs hold them."""

from __future__ import annotations

from pathlib import Path

from sponsio_audit.ingest import Store, ingest

REPO = Path(__file__).resolve().parents[2]
SUPPORT = REPO / "fixtures" / "demo" / "traces" / "support_bot.otlp.jsonl"


def test_ingest_of_the_folder_its_database_is_in_reads_only_the_traces(tmp_path: Path) -> None:
    (tmp_path / SUPPORT.name).write_bytes(SUPPORT.read_bytes())
    old = tmp_path / "old.duckdb"  # another database of the caller's, named as its own
    Store.open(old).close()
    (tmp_path / "old.duckdb.wal").write_bytes(b"not a trace")
    store = Store.open(tmp_path / "audit.duckdb")
    try:
        s = ingest([tmp_path], store, own_files=[old])  # audit.duckdb and its .wal: the store's
        paths = [p for (p,) in store.con.execute("SELECT path FROM files").fetchall()]
        assert paths == [str(tmp_path / SUPPORT.name)]
        assert (s.files, s.skipped) == (1, 0)
    finally:
        store.close()
