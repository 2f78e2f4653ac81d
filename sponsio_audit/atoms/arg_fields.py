"""One argument field over many rows, extracted without a Python loop per row.

DuckDB's JSON functions read field ``f`` of every distinct args string at the
rows of interest at once (spread back to rows by dictionary code); its
text is the field's string form (``fields.text_form``) whenever the value is
a string, an integer, a bool or null. Other values (floats, objects, lists),
dotted names not found at the top level, and names DuckDB paths cannot
quote fall back to Python, once per distinct args string, so the result is
exactly that of ``fields.field_value`` + ``fields.text_form``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms import fields
from sponsio_audit.atoms.columns import Columns, to_numpy
from sponsio_audit.redact import REDACTED

MISSING, STRING, NUMBER, OTHER, PYNUMBER, HIDDEN = 0, 1, 2, 3, 4, 5
"""Kinds of a field value: NUMBER is an integer read by DuckDB, PYNUMBER one read by Python,
HIDDEN a ``<redacted>`` value or a path through one (``fields.HIDDEN``; its text is null)."""

_KINDS = {"VARCHAR": STRING, "UBIGINT": NUMBER, "BIGINT": NUMBER, "BOOLEAN": OTHER, "NULL": OTHER}

IN_DUCKDB = 64
"""Fewest distinct args strings read by DuckDB: below, Python reads them (a DuckDB query
costs ~1.5 ms, Python ~1 µs per string parsed once)."""


_DB: list[Any] = []
_CONNECTING = threading.Lock()


def _database() -> Any:
    """One in-memory DuckDB per process (connecting costs ~0.1 s; imported on first use,
    by one thread when the audit runs on several)."""
    with _CONNECTING:
        if not _DB:
            import duckdb

            _DB.append(duckdb.connect())
    return _DB[0]


@dataclass(frozen=True)
class FieldColumn:
    """Field f at the rows ``at`` (rows of interest with args), by distinct args string.

    Row ``at[i]`` has text ``text[ids[i]]`` and kind ``kind[ids[i]]``: ``text``
    is null where the field is missing; ``kind`` is MISSING, STRING, NUMBER,
    PYNUMBER or OTHER. Tests on the field run once per distinct args string.
    """

    at: np.ndarray
    ids: np.ndarray
    text: pa.Array
    kind: np.ndarray

    def opaque(self) -> np.ndarray:
        """Per distinct args string: the field is not wholly recorded (``fields.opaque``)."""
        inner = pc.fill_null(pc.match_substring(self.text, fields.HIDDEN_TEXT), False)
        return (self.kind == HIDDEN) | ((self.kind == OTHER) & to_numpy(inner, False).astype(bool))

    def spread(self, per_distinct: np.ndarray, n: int, fill: Any) -> np.ndarray:
        """A value per distinct args string as a value per row (``fill`` off ``at``)."""
        out = np.full(n, fill, dtype=per_distinct.dtype)
        out[self.at] = per_distinct[self.ids]
        return out


def _python(args: Any, name: str) -> tuple[str | None, int]:
    v = fields.field_value(args, name)
    if v is fields.MISSING:
        return None, MISSING
    if v is fields.HIDDEN:
        return None, HIDDEN
    if isinstance(v, str):
        return v, STRING
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return fields.text_form(v), PYNUMBER
    return fields.text_form(v), OTHER


def _in_python(objs: list[Any], name: str) -> tuple[pa.Array, np.ndarray]:
    """Text and kind of field ``name`` of parsed args ``objs``."""
    pairs = [_python(o, name) for o in objs]
    texts = pa.array([t for t, _ in pairs], pa.string())
    return texts, np.array([k for _, k in pairs], dtype=np.int8)


def field_column(g: Columns, rows: np.ndarray, rows_key: Hashable, name: str) -> FieldColumn:
    """Field ``name`` of the args at ``rows`` (cached per rows_key and name)."""
    return g.cached(("field", rows_key, name), lambda: _extract(g, rows, rows_key, name))


def _extract(g: Columns, rows: np.ndarray, rows_key: Hashable, name: str) -> FieldColumn:
    d = g.distinct("args", rows, rows_key)
    if any(c in name for c in "'\"\\") or len(d.values) < IN_DUCKDB:
        text, kind = _in_python(g.parsed(rows, rows_key)[1], name)
        return FieldColumn(d.at, d.ids, text, kind)
    sub = pa.table({"a": d.values})
    path = '$."' + name + '"'
    con = _database().cursor()  # a cursor is a cheap connection of its own (thread-safe)
    con.register("sub", sub)
    out = con.sql(
        f"SELECT json_type(a, '{path}') AS ty, json_extract_string(a, '{path}') AS v FROM sub"
    ).to_arrow_table()
    con.close()
    types = out.column("ty").combine_chunks()
    text = out.column("v").combine_chunks()
    codes = pc.dictionary_encode(types)
    lut = [_KINDS.get(t, -1) for t in codes.dictionary.to_pylist()]
    kind = np.array([*lut, MISSING], dtype=np.int8)[to_numpy(codes.indices, len(lut))]
    text = pc.if_else(pc.equal(types, "NULL"), "null", text)
    hidden = (kind == STRING) & to_numpy(pc.equal(text, REDACTED), False).astype(bool)
    if hidden.any():
        kind[hidden] = HIDDEN
        text = pc.if_else(pa.array(hidden), pa.scalar(None, text.type), text)
    slow = kind == -1
    if "." in name:
        slow |= kind == MISSING
    if name != "input":  # text that is not JSON hides its fields (``fields.unparsed``)
        maybe = pc.match_substring_regex(d.values, fields.UNPARSED_PREFIX)
        slow |= (kind == MISSING) & to_numpy(maybe, False).astype(bool)
    if slow.any():
        strings = d.values.filter(pa.array(slow)).to_pylist()
        py_text, kind[slow] = _in_python([json.loads(s) for s in strings], name)
        text = pc.replace_with_mask(text, pa.array(slow), py_text.cast(text.type))
    return FieldColumn(d.at, d.ids, text, kind)


def numbers(g: Columns, rows: np.ndarray, rows_key: Hashable, name: str) -> np.ndarray:
    """``fields.numeric`` of field ``name`` at every row (NaN where not numeric or not at rows)."""
    fc = field_column(g, rows, rows_key, name)
    out = np.full(len(fc.kind), np.nan)
    num = fc.kind == NUMBER
    if num.any():
        values = pc.cast(fc.text.filter(pa.array(num)), pa.float64()).to_numpy(zero_copy_only=False)
        out[num] = np.where(np.isfinite(values), values, np.nan)
    for kind, read in ((STRING, str), (PYNUMBER, json.loads)):
        sel = fc.kind == kind
        if sel.any():
            conv = [fields.numeric(read(s)) for s in fc.text.filter(pa.array(sel)).to_pylist()]
            out[sel] = np.array([np.nan if v is None else v for v in conv], dtype=np.float64)
    return fc.spread(out, g.n, np.nan)
