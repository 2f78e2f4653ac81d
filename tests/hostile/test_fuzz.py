"""Fuzz: random and mutated OTLP/JSON, protobuf, session-log and transcript bytes never crash
ingest, and its counts always agree with its tables (issue 13).

Seeds are valid files of each format (built here); hypothesis mutates them
(bytes flipped, cut, inserted, repeated, wrapped in gzip/zstd) or draws bytes
outright. Ingest runs in this process on a real in-memory DuckDB store.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.ingest import Store, ingest

from .otlp import delimited, line, ok_line, pb_request, request, tool_span


def _seeds() -> list[bytes]:
    session = b"".join(
        line({"ts": 1.7e9 + i, "agent_id": "a", "action": "bash", "contract_id": "c"})
        for i in range(3)
    )
    native = line({"type": "tool_call", "tool": "read", "ts": 1.7e9, "args": {"p": 1}}) + line(
        {"type": "llm_response", "content": "hi", "tokens_in": 3}
    )
    transcript = json.dumps(
        [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {
                "role": "assistant",
                "content": "a",
                "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
    ).encode()
    span = tool_span("ab" * 16, "cd" * 8, "bash", {"command": "ls"})
    return [
        ok_line(1) + ok_line(2),
        json.dumps(request(span), indent=2).encode(),
        pb_request(1),
        delimited(pb_request(1), gzip.compress(pb_request(2))),
        session,
        native,
        transcript,
    ]


SEEDS = _seeds()


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "repeat", "delete"]))
        i = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[i] = draw(st.integers(0, 255))
        elif op == "cut":
            del data[i:]
        elif op == "insert":
            data[i:i] = draw(
                st.sampled_from(
                    [b"\x00", b"\n", b"{", b"]", b'"\\ud83c"', b"99999999999999999999", b"\xff"]
                )
            )
        elif op == "repeat":
            data += data[i:]
        elif op == "delete":
            del data[i : i + draw(st.integers(1, 16))]
    wrap = draw(st.sampled_from(["none", "none", "gzip", "zstd"]))
    out = bytes(data)
    if wrap == "gzip":
        out = gzip.compress(out)
    elif wrap == "zstd":
        out = zstandard.ZstdCompressor().compress(out)
    return out


INPUTS = st.one_of(_mutated(), st.binary(max_size=2048))


def _one(con: object, sql: str) -> int:
    return int(con.execute(sql).fetchall()[0][0])  # type: ignore[attr-defined]


@settings(max_examples=80)
@given(st.lists(INPUTS, min_size=1, max_size=3))
def test_ingest_of_mutated_bytes_keeps_its_accounts(blobs: list[bytes]) -> None:
    """No exception escapes; every record is counted once: the summary equals the tables."""
    with tempfile.TemporaryDirectory() as tmp:
        for i, b in enumerate(blobs):
            (Path(tmp) / f"f{i}.bin").write_bytes(b)
        store = Store.open(None)
        try:
            s = ingest([tmp], store)
            con = store.con
            # a duplicate is listed too (issue 15: format duplicate, skipped with its reason)
            assert s.files == len(blobs)
            assert s.duplicates == _one(
                con, "SELECT count(*) FROM files WHERE format = 'duplicate'"
            )
            assert s.records == _one(con, "SELECT coalesce(sum(records), 0) FROM files")
            assert s.skipped == _one(con, "SELECT count(*) FROM skipped")
            assert s.skipped == _one(con, "SELECT coalesce(sum(skipped), 0) FROM files")
            assert s.events == _one(con, "SELECT count(*) FROM events")
            assert s.spans == _one(con, "SELECT count(*) FROM spans")
            # a record is listed as skipped at most once, and only in a file that has it
            assert s.skipped == _one(
                con, "SELECT count(*) FROM (SELECT DISTINCT file_id, record FROM skipped)"
            )
            assert _one(con, "SELECT count(*) FROM files WHERE skipped > records") == 0
            # every loaded or skipped record belongs to a listed file
            assert (
                _one(
                    con,
                    "SELECT count(*) FROM (SELECT file_id FROM spans UNION ALL "
                    "SELECT file_id FROM events UNION ALL SELECT file_id FROM skipped) "
                    "WHERE file_id NOT IN (SELECT file_id FROM files)",
                )
                == 0
            )
        finally:
            store.close()
