"""Bad input never crashes ingest: each bad record is skipped with a reason, the rest loads."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from sponsio_audit.ingest import values

from .conftest import OTEL, events, load, make_otel, rows

GOOD = (OTEL / "openllmetry.jsonl").read_bytes()  # one request, 4 spans, 4 events


def _skipped(store: object) -> list[tuple[str, int, str]]:
    return [
        (Path(r["path"]).name, r["record"], r["reason"])
        for r in rows(
            store,  # type: ignore[arg-type]
            "SELECT f.path, s.record, s.reason FROM skipped s JOIN files f USING (file_id) "
            "ORDER BY f.file_id, s.record",
        )
    ]


def _accounting_holds(store: object, summary: object) -> None:
    (t,) = rows(store, "SELECT sum(records) AS r, sum(skipped) AS s FROM files")  # type: ignore[arg-type]
    assert t["r"] == summary.records  # type: ignore[attr-defined]
    assert t["s"] == summary.skipped == len(_skipped(store))  # type: ignore[attr-defined]


def test_truncated_protobuf(tmp_path: Path) -> None:
    body = (OTEL / "genai.raw.pb").read_bytes()
    (tmp_path / "raw.pb").write_bytes(body[: len(body) // 2])
    rec = make_otel.delimited([body, body])
    (tmp_path / "delim.pb").write_bytes(rec[:-20])
    (tmp_path / "ok.jsonl").write_bytes(GOOD)
    store, s = load(tmp_path)
    sk = _skipped(store)
    assert sk[0][:2] == ("delim.pb", 2) and sk[0][2].startswith("truncated record: expected")
    assert sk[1][:2] == ("raw.pb", 1) and sk[1][2].startswith("invalid OTLP protobuf")
    assert s.spans == 6 + 4  # first delimited record + the good file
    _accounting_holds(store, s)


def test_broken_json_lines(tmp_path: Path) -> None:
    p = tmp_path / "mixed.jsonl"
    p.write_bytes(
        GOOD + b'{"resourceSpans": [\n' + b"42\n\n" + (OTEL / "sponsio.jsonl").read_bytes()
    )
    store, s = load(p)
    assert [(n, r.split(":")[0]) for _, n, r in _skipped(store)] == [
        (2, "invalid JSON"),
        (3, "not an OTLP/JSON object"),
    ]
    assert (s.records, s.skipped, s.spans) == (4, 2, 4 + 6)
    assert len(events(store)) == 4 + 1


def test_binary_and_empty_files(tmp_path: Path) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(4096))
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "blank.json").write_bytes(b"\n\n  \n")
    (tmp_path / "ok.jsonl").write_bytes(GOOD)
    store, s = load(tmp_path)
    assert _skipped(store) == [
        ("blank.json", 0, "empty file"),
        ("empty.jsonl", 0, "empty file"),
        ("image.png", 0, "unrecognised format (not OTLP, Sponsio log or transcript)"),
    ]
    assert s.spans == 4
    _accounting_holds(store, s)


def test_fifty_megabyte_attribute(tmp_path: Path) -> None:
    big = "x" * (50 * 1024 * 1024)
    tree = {
        "name": "execute_tool dump",
        "start": 0,
        "end": 1,
        "attrs": {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "dump",
            "gen_ai.tool.call.result": big,
        },
    }
    make_otel.write_all(tmp_path / "big", [make_otel.spans_request([tree], "svc")])
    for name in ("big.jsonl", "big.pb"):
        store, s = load(tmp_path / name, OTEL / "sponsio.pb")
        assert s.skipped == 0
        (e,) = [e for e in events(store) if e["tool"] == "dump"]
        cut = 50 * 1024 * 1024 - values.MAX_STR
        assert e["content"] == "x" * values.MAX_STR + f"…[truncated {cut} chars]"
        assert len(events(store)) == 2


def test_deeply_nested_values(tmp_path: Path) -> None:
    deep_json = "[" * 100_000 + "]" * 100_000
    line = GOOD.decode().replace('"shop"', '"shop"}},{"key":"deep","value":{"stringValue":"x"')
    doc = json.loads(line)
    v: dict[str, object] = {"stringValue": "leaf"}
    for _ in range(200):
        v = {"arrayValue": {"values": [v]}}
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append(
        {"key": "nest", "value": v}
    )
    p = tmp_path / "deep.jsonl"
    p.write_text(deep_json + "\n" + json.dumps(doc) + "\n")
    store, s = load(p, db=tmp_path / "t.duckdb")
    assert _skipped(store) == [("deep.jsonl", 1, "JSON nested too deep")]
    assert s.spans == 4
    attrs = [json.loads(r["attributes"]) for r in rows(store, "SELECT attributes FROM spans")]
    nest = next(a["nest"] for a in attrs if "nest" in a)
    depth = 0
    while isinstance(nest, list):
        nest, depth = nest[0], depth + 1
    assert (depth, nest) == (values.MAX_DEPTH, values.DEPTH_MARKER)
    # protobuf: nesting beyond the decoder's limit is a skipped record, not a crash
    req = make_otel.spans_request([{"name": "n", "start": 0, "end": 1, "attrs": {"k": "v"}}], "s")
    span = req.resource_spans[0].scope_spans[0].spans[0].SerializeToString()
    av = AnyValue(string_value="leaf").SerializeToString()
    for _ in range(300):  # AnyValue{array_value: ArrayValue{values: [av]}}, written on the wire
        av = _field(5, _field(1, av))
    kv = _field(1, b"nest") + _field(2, av)
    body = _field(1, _field(2, _field(2, span + _field(9, kv))))
    (tmp_path / "deep.pb").write_bytes(make_otel.delimited([body]))
    (tmp_path / "deep.jsonl").unlink()
    (tmp_path / "ok.jsonl").write_bytes(GOOD)
    store, s = load(tmp_path)
    assert s.spans in (4, 5)  # 5 if this protobuf runtime accepts the depth (then it is capped)
    _accounting_holds(store, s)


def _field(no: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    n, out = len(payload), bytearray([no << 3 | 2])
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out) + payload


def test_invalid_utf8(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"resourceSpans": [], "x": "\xff\xfe"}\n' + GOOD)
    store, s = load(p)
    assert _skipped(store) == [("bad.jsonl", 1, "invalid UTF-8 at byte 28")]
    assert s.spans == 4


def test_corrupt_gzip_keeps_other_files(tmp_path: Path) -> None:
    data = gzip.compress(GOOD * 50)
    (tmp_path / "a.gz").write_bytes(data[: len(data) // 2])
    (tmp_path / "b.jsonl").write_bytes(GOOD.replace(b"s-9", b"s-10"))
    store, s = load(tmp_path)
    (sk,) = _skipped(store)
    assert sk[0] == "a.gz" and sk[2].startswith("unreadable stream")
    assert s.spans >= 4
    _accounting_holds(store, s)


def test_odd_attribute_types_do_not_cost_the_record(tmp_path: Path) -> None:
    """An array where a convention expects a string is just not that convention's value:
    the span and the rest of its request load (it once skipped the whole request)."""
    odd = {"gen_ai.operation.name": ("chat", "x"), "traceloop.span.kind": ("tool",)}
    req = make_otel.spans_request(
        [
            {"name": "odd", "attrs": odd, "start": 0, "end": 1},
            {
                "name": "execute_tool t",
                "attrs": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
                "start": 2,
                "end": 3,
            },
        ],
        "svc",
    )
    path = tmp_path / "odd.pb"
    path.write_bytes(req.SerializeToString())
    store, s = load(path, db=tmp_path / "t.duckdb")
    assert (s.records, s.spans, s.skipped) == (1, 2, 0)
    assert [(e["type"], e["tool"]) for e in events(store)] == [("tool_call", "t")]
    (span,) = rows(store, "SELECT attributes FROM spans WHERE name = 'odd'")
    assert json.loads(span["attributes"])["gen_ai.operation.name"] == ["chat", "x"]


def test_the_tools_own_outputs_in_a_trace_folder_are_named(tmp_path: Path) -> None:
    """A folder of traces that also holds an earlier audit (``scan --db``'s DuckDB file,
    ``scan --parquet``'s export, both written here by the real command) lists each as a
    skipped file saying what it is and how to read it, not as 'unrecognised format'; the
    traces beside them load as before."""
    (tmp_path / "ok.jsonl").write_bytes(GOOD)
    kept = tmp_path / "old"
    kept.mkdir()
    subprocess.run(
        [sys.executable, "-m", "sponsio_audit", "scan", str(tmp_path / "ok.jsonl"), "--pack",
         "default", "--db", str(kept / "audit.duckdb"), "--parquet", str(kept / "tables"),
         "-q", "--fail-on", "none"],
        check=True, capture_output=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    parquets = sorted(p.name for p in (kept / "tables").glob("*.parquet"))
    assert parquets, "the export wrote no Parquet file"
    store, s = load(tmp_path)
    got = _skipped(store)
    duck = "a DuckDB database, not traces (a stored audit? read it with --db)"
    assert ("audit.duckdb", 0, duck) in got
    assert sorted(n for n, _, r in got if r.startswith("a Parquet file, not traces")) == parquets
    assert len(got) == 1 + len(parquets)
    assert s.spans == 4
    _accounting_holds(store, s)
