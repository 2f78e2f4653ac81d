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


def _object(pairs: list[tuple[str, pa.Array]], indent: int, lead: str = "") -> pa.Array:
    """``lead{ "k": v, … }`` per row, keys at ``indent`` + 2 spaces, the closing brace at
    ``indent``."""
    inner = " " * (indent + 2)
    parts: list[Any] = [_lit(lead + "{\n")]
    for i, (key, values) in enumerate(pairs):
        sep = ",\n" if i < len(pairs) - 1 else "\n"
        parts += [_lit(f"{inner}{orjson.dumps(key).decode()}: "), values, _lit(sep)]
    parts.append(_lit(" " * indent + "}"))
    return pc.binary_join_element_wise(*parts, _lit(""))


def _lit(text: str) -> pa.Scalar:
    return pa.scalar(text, TEXT)


def _fingerprints(
    table: pa.Table, rows: np.ndarray, contract: Callable[[str], dict[str, Any]]
) -> list[str]:
    """``baseline.fingerprint`` of the rows ``rows`` of ``table``, once per distinct input."""
    from sponsio_audit.report.baseline import fingerprint

    names = ["contract_id", "guarantee", "guarantee_text", "tool", "evidence"]
    has_matched = "matched" in table.column_names
    if has_matched:
        names.append("matched")
    at = pa.array(rows)
    cols = [table.column(n).take(at).to_pylist() for n in names]
    out = []
    done: dict[tuple[Any, ...], str] = {}
    for key in zip(*cols, strict=True):
        fp = done.get(key)
        if fp is None:
            v = dict(zip(names, key, strict=True))
            fp = done[key] = fingerprint(v, contract(str(v["contract_id"])))
        out.append(fp)
    return out


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
    texts = _object(
        [(k, enc[c].take(item_rows)) for k, c in EVENT_KEYS], indent + 4, lead=pad + "    "
    )
    lists = pa.LargeListArray.from_arrays(pa.array(offsets), texts)
    joined = pc.binary_join(lists, _lit(",\n"))
    offending = pc.if_else(
        pa.array(counts == 0),
        _lit("[]"),
        pc.binary_join_element_wise(_lit("[\n"), joined, _lit(f"\n{pad}  ]"), _lit("")),
    )
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
        ("blamed", _object([(k, enc[c].take(at)) for k, c in EVENT_KEYS], indent + 2)),
        ("opened_seq", _encoded(table.column("opened_seq")).take(at)),
        ("offending", offending),
        ("fingerprint", pa.array([f'"{fp}"' for fp in fps], TEXT)),
    ]
    entries = _object(fields, indent, lead=pad)
    whole = pc.binary_join(
        pa.LargeListArray.from_arrays(pa.array([0, len(entries)]), entries), _lit(",\n")
    )
    return "".join(("[\n", str(whole[0].as_py()), "\n", " " * (indent - 2), "]"))


def _group_codes(table: pa.Table) -> np.ndarray:
    """One integer per distinct (trace, contract, guarantee) of the rows."""
    t = ranks(table.column("trace_id"))
    c = ranks(table.column("contract_id"))
    g = table.column("guarantee").to_numpy().astype(np.int64)
    g = g - g.min()
    width_g = int(g.max()) + 1
    width_c = int(c.max()) + 1
    return (t * width_c + c) * width_g + g
