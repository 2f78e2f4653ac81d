"""The ``violations`` array of the JSON report, written from the Arrow table in columns.

A report can hold hundreds of thousands of violation rows; building a dict
per row and handing them to the encoder cost more than the rest of the
report. Here every value is encoded once per distinct value (strings by
orjson, so exactly the bytes ``jsonenc.dumps`` writes; integers as Arrow
formats them, which is how JSON writes them), and the indented text of
each entry is joined from those pieces with Arrow string kernels. The text
is what ``jsonenc.dumps(document)`` writes for the same entries, at the
same depth (tests hold the two against each other).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.report.xmlchars import legal
from sponsio_audit.verdicts import ranks

EVENT_KEYS = (
    ("seq", "seq"),
    ("span_id", "span_id"),
    ("tool", "tool"),
    ("agent", "agent"),
    ("file", "path"),
    ("record", "record"),
    ("evidence", "evidence"),
)
"""Keys of a blamed or offending event and the violation columns they come from."""
TEXT = pa.large_string()
"""Pieces of text are large strings: a report may pass 2 GB."""


def _encoded(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Each value as JSON text: strings by orjson once per distinct value, integers and
    booleans as their literals, null as ``null``."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    t = column.type
    if pa.types.is_dictionary(t):
        column = column.cast(t.value_type)
        t = column.type
    if pa.types.is_integer(t):
        return pc.fill_null(pc.cast(column, TEXT), _lit("null"))
    if pa.types.is_boolean(t):
        return pc.fill_null(pc.if_else(column, _lit("true"), _lit("false")), _lit("null"))
    enc = pc.dictionary_encode(column)
    texts = [orjson.dumps(v).decode() for v in enc.dictionary.to_pylist()]
    if any("\ufffe" in x or "\uffff" in x for x in texts):  # orjson escaped every other one
        texts = [legal(x) for x in texts]
    idx = enc.indices
    out = pa.array([*texts, "null"], TEXT)
    codes = pc.fill_null(idx.cast(pa.int64()), len(texts))
    return pc.take(out, codes)


def _pieces(pairs: list[tuple[str, Any]], indent: int, lead: Any = "") -> list[Any]:
    """The pieces of ``lead{ "k": v, … }`` per row, keys at ``indent`` + 2 spaces, the closing
    brace at ``indent``; a value is an array or a list of pieces (a nested object)."""
    inner = " " * (indent + 2)
    parts: list[Any] = [*(lead if isinstance(lead, list) else [lead]), "{\n"]
    for i, (key, values) in enumerate(pairs):
        sep = ",\n" if i < len(pairs) - 1 else "\n"
        parts.append(f"{inner}{orjson.dumps(key).decode()}: ")
        parts += values if isinstance(values, list) else [values]
        parts.append(sep)
    parts.append(" " * indent + "}")
    return parts


def _joined(parts: list[Any]) -> pa.Array:
    """The pieces joined per row (neighbouring literals merged first)."""
    merged: list[Any] = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        elif not (isinstance(p, str) and not p):
            merged.append(p)
    args = [_lit(p) if isinstance(p, str) else p for p in merged]
    return pc.binary_join_element_wise(*args, _lit(""))


def _runs(texts: pa.Array, bounds: np.ndarray) -> pa.Array:
    """Row i: the texts ``bounds[i]``..``bounds[i + 1]`` end to end, without a copy (the
    slices of the texts' one data buffer)."""
    _, offsets, data = texts.buffers()
    offs = np.frombuffer(offsets, dtype=np.int64, count=len(texts) + 1, offset=texts.offset * 8)
    starts = offs[bounds].astype(np.int64)
    return pa.LargeStringArray.from_buffers(len(bounds) - 1, pa.py_buffer(starts), data)


def _lit(text: str) -> pa.Scalar:
    return pa.scalar(text, TEXT)


def _fingerprints(
    table: pa.Table, rows: np.ndarray, contract: Callable[[str], dict[str, Any]]
) -> list[str]:
    """``baseline.fingerprint`` of the rows ``rows`` of ``table``, once per distinct input
    (the evidence sentence counts only where the guarantee has no pattern)."""
    from sponsio_audit.report.baseline import fingerprint

    names = ["contract_id", "guarantee", "guarantee_text", "tool", "evidence"]
    if "matched" in table.column_names:
        names.append("matched")
    sub = table.select(names).take(pa.array(rows))
    codes = {n: ranks(sub.column(n)) for n in names}
    pair = _dense(codes["contract_id"], codes["guarantee"])
    _, first_of_pair = np.unique(pair, return_index=True)
    patterned = np.zeros(int(pair.max()) + 1, dtype=bool)
    cids = sub.column("contract_id").to_pylist()
    gs = sub.column("guarantee").to_pylist()
    for k in first_of_pair.tolist():
        ps = contract(str(cids[k])).get("patterns") or []
        patterned[pair[k]] = bool(int(gs[k]) < len(ps) and ps[int(gs[k])])
    evidence = np.where(patterned[pair], -1, codes["evidence"])
    key = pair
    for n in names[2:]:
        key = _dense(key, evidence if n == "evidence" else codes[n])
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    picked = sub.take(pa.array(first)).to_pylist()
    fps = [fingerprint(v, contract(str(v["contract_id"]))) for v in picked]
    return [fps[i] for i in np.asarray(inverse).ravel().tolist()]


def _dense(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One dense code per distinct pair (a, b) of codes."""
    b = b - b.min() if len(b) else b
    joint = a.astype(np.int64) * (int(b.max()) + 1 if len(b) else 1) + b
    return np.asarray(np.unique(joint, return_inverse=True)[1], dtype=np.int64).ravel()


def violations_text(
    table: pa.Table, contract: Callable[[str], dict[str, Any]], indent: int = 4
) -> str:
    """The JSON text of the ``violations`` array (items at ``indent``; ``table`` in report
    order), as ``jsonenc.dumps`` indents it inside the report document, the code points
    ``xmlchars.legal`` replaces already replaced."""
    blamed_mask = pc.fill_null(table.column("blamed"), False).to_numpy(zero_copy_only=False)
    blamed = np.flatnonzero(blamed_mask)
    if not len(blamed):
        return "[]"
    pad = " " * indent
    enc = {name: _encoded(table.column(name)) for _, name in EVENT_KEYS}
    # the others of each (trace, contract, guarantee): its non-blamed rows in report order
    key = _group_codes(table)
    others = np.flatnonzero(~blamed_mask)
    others = others[np.argsort(key[others], kind="stable")]
    okey = key[others]
    lo = np.searchsorted(okey, key[blamed], side="left")
    hi = np.searchsorted(okey, key[blamed], side="right")
    counts = hi - lo
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    step = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], counts)
    item_rows = pa.array(others[np.repeat(lo, counts) + step], pa.int64())
    first = np.zeros(len(step), dtype=bool)
    first[offsets[:-1][counts > 0]] = True
    lead = pc.if_else(pa.array(first), _lit("\n"), _lit(",\n"))
    items = _joined(
        _pieces(
            [(k, enc[c].take(item_rows)) for k, c in EVENT_KEYS], indent + 4, [lead, pad + "    "]
        )
    )
    empty = pa.array(counts == 0)
    offending = [
        pc.if_else(empty, _lit("[]"), _lit("[")),
        _runs(items, offsets),
        pc.if_else(empty, _lit(""), _lit(f"\n{pad}  ]")),
    ]
    at = pa.array(blamed)
    fps = _fingerprints(table, blamed, contract)
    fields = [
        ("trace_id", _encoded(table.column("trace_id")).take(at)),
        ("contract_id", _encoded(table.column("contract_id")).take(at)),
        ("guarantee", _encoded(table.column("guarantee")).take(at)),
        ("guarantee_text", _encoded(table.column("guarantee_text")).take(at)),
        ("kind", _encoded(table.column("kind")).take(at)),
        ("severity", _encoded(table.column("severity")).take(at)),
        ("strategy", _encoded(table.column("strategy")).take(at)),
        ("blamed", _pieces([(k, enc[c].take(at)) for k, c in EVENT_KEYS], indent + 2)),
        ("opened_seq", _encoded(table.column("opened_seq")).take(at)),
        ("offending", offending),
        ("fingerprint", pa.array([f'"{fp}"' for fp in fps], TEXT)),
    ]
    entries = _joined(_pieces(fields, indent, ",\n" + pad))
    _, offsets_buf, data = entries.buffers()
    offs = np.frombuffer(offsets_buf, dtype=np.int64, count=len(entries) + 1)
    body = str(memoryview(data)[int(offs[0]) + 2 : int(offs[-1])], "utf-8")  # no first ",\n"
    return "".join(("[\n", body, "\n", " " * (indent - 2), "]"))


def _group_codes(table: pa.Table) -> np.ndarray:
    """One integer per distinct (trace, contract, guarantee) of the rows."""
    t = ranks(table.column("trace_id"))
    c = ranks(table.column("contract_id"))
    g = table.column("guarantee").to_numpy().astype(np.int64)
    g = g - g.min()
    width_g = int(g.max()) + 1
    width_c = int(c.max()) + 1
    return (t * width_c + c) * width_g + g
