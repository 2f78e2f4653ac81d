"""A worker process that dies (the out-of-memory killer, a crash) loses only what it died on.

Real worker processes are killed here (``SIGKILL``, ``os._exit``) while they map items;
``Workers.map`` must give every other item's result, in order, start new workers, and
say what happened to the lost one. Through ``ingest``, the chunk a worker dies on has its
records listed as skipped with the signal, and the rest of the file is loaded as with one
process: the totals still add up (records read = records loaded + skipped).
"""

from __future__ import annotations

import errno
import html
import json
import multiprocessing
import os
import signal
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import typer

from sponsio_audit.cli.common import guarded
from sponsio_audit.ingest import Store, chunks, inchunk, ingest, workers
from sponsio_audit.ingest.workers import WorkerDied, Workers
from tests.cli.conftest import CONFIG, cli, json_scan

from .conftest import OTEL

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="worker signals: Linux here")

MARK = b"worker-killer-7b1f"
_decode_traced = inchunk.decode_traced  # the real one, before a test replaces it


def _in_worker() -> bool:
    return multiprocessing.parent_process() is not None


def _die_on_7_and_11(i: int) -> int:
    if _in_worker() and i == 7:
        os.kill(os.getpid(), signal.SIGKILL)
    if _in_worker() and i == 11:
        os._exit(3)
    return i * 2


def _die_once(item: tuple[int, str]) -> int:
    """Kills its worker the first time it sees item 5 (a marker file remembers it)."""
    i, marker = item
    if _in_worker() and i == 5 and not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return i


def _dying_once_decode(item: inchunk.RangeChunk) -> tuple[chunks.Decoded, chunks.Traced]:
    """``decode_traced``, but the first worker given the file's second chunk dies."""
    marker = item.path + ".died"
    if _in_worker() and item.offset > 0 and not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return _decode_traced(item)


def _dying_decode(item: inchunk.RangeChunk) -> tuple[chunks.Decoded, chunks.Traced]:
    """``decode_traced``, but a worker given the chunk with ``MARK`` in it dies."""
    if _in_worker() and any(MARK in rec for _, rec in item.read().records):
        os.kill(os.getpid(), signal.SIGKILL)
    return _decode_traced(item)


def test_an_item_that_kills_its_worker_twice_is_lost_alone() -> None:
    with Workers(2, start_inline=False) as w:
        got = list(w.map(_die_on_7_and_11, range(20), lost=lambda i, how: (i, how)))
        again = list(w.map(_die_on_7_and_11, range(3)))  # the pool is usable after
    want = [i * 2 for i in range(20)]
    assert got[:7] + got[8:11] + got[12:] == want[:7] + want[8:11] + want[12:]
    assert got[7] == (7, "killed by signal SIGKILL; out of memory?")
    assert got[11] == (11, "exited with code 3")
    assert again == [0, 2, 4]


def test_items_in_flight_when_a_worker_dies_once_are_all_mapped(tmp_path: Path) -> None:
    marker = str(tmp_path / "died")
    told: list[str] = []
    with Workers(2, start_inline=False, warn=told.append) as w:
        got = list(w.map(_die_once, [(i, marker) for i in range(12)], lost=lambda i, how: None))
    assert os.path.exists(marker)  # a worker did die on item 5
    assert got == list(range(12))  # and nothing was lost: item 5 ran again, alone
    assert len(told) == 1 and "killed by signal SIGKILL" in told[0] and "read again" in told[0]


def test_without_lost_a_second_death_ends_the_map_with_one_clear_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with Workers(2, start_inline=False) as w:
        seen: list[int] = []
        with pytest.raises(WorkerDied, match=r"killed by signal SIGKILL.*--jobs 1") as e:
            seen.extend(w.map(_die_on_7_and_11, range(10)))
    assert seen == [0, 2, 4, 6, 8, 10, 12]  # everything before it was handed over
    with pytest.raises(typer.Exit) as code, guarded():  # what the commands say of it
        raise e.value
    assert code.value.exit_code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err


def test_ingest_lists_the_chunk_a_worker_died_on_and_loads_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (OTEL / "genai.jsonl").read_bytes().splitlines(keepends=True)
    doomed = b'{"resourceSpans": [], "note": "' + MARK + b'"}\n'
    body = lines * 6 + [doomed] + lines * 6
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"".join(body))
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1_500)  # many ranges, several in flight

    whole = Store.open(None)
    want = ingest([path], whole, jobs=1)
    assert want.skipped == 0 and want.records == len(body)

    monkeypatch.setattr(workers, "START_INLINE", False)  # every chunk in a worker
    monkeypatch.setattr(inchunk, "decode_traced", _dying_decode)
    store = Store.open(None)
    got = ingest([path], store, jobs=2)

    skipped = store.con.execute("SELECT record, reason FROM skipped ORDER BY record").fetchall()
    lost = [no for no, _ in skipped]
    assert len(lines) * 6 + 1 in lost  # the record with the marker, and its chunk's
    assert lost == list(range(lost[0], lost[-1] + 1))  # one chunk: consecutive records
    assert all("killed by signal SIGKILL" in why and "twice" in why for _, why in skipped)
    assert got.records == want.records and got.skipped == len(lost)  # totals add up

    def spans(s: Store) -> list[tuple[int, str]]:
        return s.con.execute("SELECT record, span_id FROM spans ORDER BY ALL").fetchall()

    kept = [(r, sid) for r, sid in spans(whole) if r not in set(lost)]
    assert spans(store) == kept  # every other record loaded, as in one process
    assert kept and len(kept) < len(spans(whole))  # the lost chunk held spans too


def test_scan_says_a_worker_died_and_reports_as_without_the_death(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (OTEL / "genai.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"".join(lines * 12))
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1_500)

    one, want = json_scan(path, tmp_path / "one.json", "1")
    monkeypatch.setattr(workers, "START_INLINE", False)
    monkeypatch.setattr(inchunk, "decode_traced", _dying_once_decode)
    two, got = json_scan(path, tmp_path / "two.json", "2")
    assert Path(str(path) + ".died").exists()  # a worker did die
    assert two.exit_code == one.exit_code and got == want  # nothing lost
    assert "warning: a worker process died (killed by signal SIGKILL" in two.stderr
    assert "Traceback" not in two.stderr


def test_a_worker_death_is_in_the_stored_report_in_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A nightly job that reads only the report (or re-renders the stored audit) must still
    learn that a worker died: the provenance keeps the warning the scan printed."""
    lines = (OTEL / "genai.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"".join(lines * 12))
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1_500)
    clean = tmp_path / "clean.json"
    one = cli("scan", path, "-c", CONFIG, "--jobs", "1", "-f", "json", "-o", clean)
    assert json.loads(clean.read_bytes())["provenance"]["warnings"] == []

    monkeypatch.setattr(workers, "START_INLINE", False)
    monkeypatch.setattr(inchunk, "decode_traced", _dying_once_decode)
    db = tmp_path / "audit.duckdb"
    r = cli("scan", path, "-c", CONFIG, "--jobs", "2", "--db", db, "-f", "json", "-o", clean)
    assert r.exit_code == one.exit_code
    said = [ln[len("warning: ") :] for ln in r.stderr.splitlines() if "worker process died" in ln]
    assert len(said) == 1 and "killed by signal SIGKILL" in said[0]
    assert json.loads(clean.read_bytes())["provenance"]["warnings"] == said

    def rendered(fmt: str) -> str:
        out = tmp_path / f"again.{fmt}"
        assert cli("report", "--db", db, "-f", fmt, "-o", out).exit_code == 0
        return out.read_text(encoding="utf-8")

    assert json.loads(rendered("json"))["provenance"]["warnings"] == said
    notes = json.loads(rendered("sarif"))["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert {"level": "warning", "message": {"text": said[0]}} in notes
    junit = ET.fromstring(rendered("junit"))
    warned = {p.get("value") for p in junit.iter("property") if p.get("name") == "warning"}
    assert warned == {said[0]}
    assert said[0] in rendered("markdown") and said[0] in rendered("table")
    assert html.escape(said[0], quote=False) in rendered("html")


def test_when_no_worker_can_be_started_after_a_death_the_rest_is_mapped_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a death, the new pool cannot fork (simulated: the OS's EAGAIN when the pool
    starts a process): every item is still mapped, the rest in this process, and told."""
    from concurrent.futures import ProcessPoolExecutor

    spawn = ProcessPoolExecutor._spawn_process  # type: ignore[attr-defined]
    started: list[int] = []

    def spawn_twice(self: Any) -> None:
        if len(started) >= 2:  # the first pool's two workers only
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        started.append(1)
        spawn(self)

    monkeypatch.setattr(ProcessPoolExecutor, "_spawn_process", spawn_twice)
    told: list[str] = []
    with Workers(2, start_inline=False, warn=told.append) as w:
        got = list(w.map(_die_on_7_and_11, range(16), lost=lambda i, how: ("lost", i)))
    assert got == [i * 2 for i in range(16)]  # 7 and 11 ran here, where they do not die
    assert w.unavailable is not None and "Resource temporarily unavailable" in w.unavailable
    assert any("died" in t for t in told) and any("cannot be started" in t for t in told)
