"""The ``violations`` array of the JSON report, written from the Arrow table in columns.

A report can hold hundreds of thousands of violation rows; building a dict
per row and handing them to the encoder cost more than the rest of the
report. Here every distinct value of a column is encoded once (a string
needing no escape is quoted by Arrow, any other by orjson, so exactly the
bytes ``jsonenc.dumps`` writes; integers as Arrow formats them, which is
how JSON writes them), and the text is laid out as a ``Layout``: a grid of
pieces, one row per entry, each piece a literal or an index into the
encoded values. One Arrow ``take`` of all pieces in row order writes the
text end to end in one buffer. The text is what ``jsonenc.dumps(document)``
writes for the same entries, at the same depth (tests hold the two against
each other).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

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
BYTES = pa.large_binary()
"""Pieces of text are large binaries (UTF-8): a report may pass 2 GB."""
SMALL_BYTES = 1 << 31
"""Text up to this size is written with 32-bit offsets (Arrow's ``binary``)."""
PIECE_BYTES = 256 << 10
"""About how much of the array's text one ``take`` writes (``Texts.written``). Small, so
that each piece reuses the memory the one before freed: pyarrow's jemalloc purges freed
pages as they age (its decay), and pieces of 8 MB were faulted in afresh each time (the
82 MB report of ``bench/scan.py``: 34-36k page faults and 0.37-0.41 s at 8 MB,
10-12k and 0.16-0.26 s at 256 KB)."""
_ESCAPED = r"[\x00-\x1f\"\\]"
"""What JSON escapes in a string (orjson and the stdlib alike); other strings are only quoted."""
_ILLEGAL = "[\ufffe\uffff]"
"""The code points ``xmlchars.legal`` replaces that an encoded string can still hold."""


@dataclass(frozen=True)
class Encoded:
    """A column as JSON texts: each row's index into ``texts`` (its distinct encoded values)."""

    codes: np.ndarray
    texts: pa.Array

    def take(self, rows: np.ndarray) -> Encoded:
        """The same texts for the rows ``rows`` only."""
        return Encoded(self.codes[rows], self.texts)


def encoded(column: pa.ChunkedArray | pa.Array) -> Encoded:
    """Each value as JSON text: strings once per distinct value, integers and booleans as
    their literals, null as ``null``; the code points ``legal`` replaces already replaced."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    t = column.type
    n = len(column)
    if pa.types.is_integer(t):
        texts = pc.fill_null(pc.cast(column, pa.large_string()), "null").cast(BYTES)
        return Encoded(np.arange(n, dtype=np.int64), texts)
    if pa.types.is_boolean(t):
        valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        truth = pc.fill_null(column, False).to_numpy(zero_copy_only=False)
        codes = np.where(valid, truth.astype(np.int64), 2)
        return Encoded(codes, pa.array([b"false", b"true", b"null"], BYTES))
    codes, values = _codes(column)
    texts = _quoted(values.cast(pa.large_string()))
    return Encoded(codes, pa.concat_arrays([texts, pa.array([b"null"], BYTES)]))


def _codes(column: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(per-row index into the distinct values, the values) of a string or dictionary
    column; a null's index is ``len(values)``."""
    enc = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
    values = enc.dictionary
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    codes = enc.indices.to_numpy(zero_copy_only=False)
    if enc.null_count:
        valid = np.asarray(enc.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        codes = np.where(valid, codes, len(values))
    return np.asarray(codes, dtype=np.int64), values


def _quoted(values: pa.Array) -> pa.Array:
    """JSON strings of ``values`` (large strings, no nulls) as UTF-8 bytes."""
    quote, nothing = pa.scalar('"', pa.large_string()), pa.scalar("", pa.large_string())
    plain = pc.binary_join_element_wise(quote, values, quote, nothing)
    odd = np.flatnonzero(pc.match_substring_regex(values, _ESCAPED).to_numpy(zero_copy_only=False))
    if len(odd):  # escaped by orjson, the stdlib's bytes (``jsonenc``)
        fixed = [orjson.dumps(v).decode() for v in values.take(pa.array(odd)).to_pylist()]
        mask = np.zeros(len(values), dtype=bool)
        mask[odd] = True
        full = np.full(len(values), None, dtype=object)
        full[odd] = fixed
        plain = pc.if_else(pa.array(mask), pa.array(full, pa.large_string()), plain)
    if pc.any(pc.match_substring_regex(plain, _ILLEGAL)).as_py():
        plain = pc.replace_substring_regex(plain, _ILLEGAL, "\ufffd")
    return plain.cast(BYTES)


class Texts:
    """The encoded values and literals a text is made of, as one array to ``take`` from."""

    def __init__(self) -> None:
        self.arrays: list[pa.Array] = []
        self.size = 0
        self._literals: dict[str, int] = {}
        self._bases: dict[int, int] = {}

    def literal(self, text: str) -> int:
        """The index of a literal text."""
        at = self._literals.get(text)
        if at is None:
            at = self._literals[text] = self._append(pa.array([text.encode()], BYTES))
        return at

    def base(self, texts: pa.Array) -> int:
        """The index of the first of ``texts`` (added once)."""
        at = self._bases.get(id(texts))
        if at is None:
            at = self._bases[id(texts)] = self._append(texts)
        return at

    def _append(self, texts: pa.Array) -> int:
        self.arrays.append(texts)
        self.size += len(texts)
        return self.size - len(texts)

    def written(self, flat: np.ndarray, skip: int = 0) -> Iterator[memoryview]:
        """The texts at ``flat`` end to end, less their first ``skip`` bytes, in pieces of
        about ``PIECE_BYTES`` (one ``take`` each: every text copied once, and only one
        piece of a report of hundreds of MB is held at a time)."""
        values = pa.concat_arrays(self.arrays)
        _, value_offsets, _ = values.buffers()
        lengths = np.diff(np.frombuffer(value_offsets, dtype=np.int64, count=len(values) + 1))
        small = int(lengths.sum()) < SMALL_BYTES
        width = np.int32 if small else np.int64  # Arrow takes 32-bit offsets 3x faster
        source = values.cast(pa.binary()) if small else values
        ends = np.cumsum(lengths[flat])
        total = int(ends[-1]) if len(ends) else 0
        cuts = np.searchsorted(ends, np.arange(PIECE_BYTES, total, PIECE_BYTES), side="right")
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(flat)], strict=True):
            if hi <= lo:
                continue
            out = pc.take(source, pa.array(flat[lo:hi]))
            _, offsets, data = out.buffers()
            if data is None:
                continue
            offs = np.frombuffer(offsets, dtype=width, count=len(out) + 1)
            first = int(offs[0]) + (skip if lo == 0 else 0)
            if first < int(offs[-1]):
                yield memoryview(data)[first : int(offs[-1])]


@dataclass
class Layout:
    """Rows of text as a grid of pieces (literals and ``Encoded`` columns); neighbouring
    literals are merged."""

    rows: int
    pieces: list[str | Encoded] = field(default_factory=list)

    def add(self, *pieces: str | Encoded) -> None:
        """Append pieces to every row."""
        for p in pieces:
            if isinstance(p, str):
                if not p:
                    continue
                if self.pieces and isinstance(self.pieces[-1], str):
                    self.pieces[-1] += p
                    continue
            self.pieces.append(p)

    def obj(
        self, pairs: list[tuple[str, Encoded | Layout]], indent: int, close: bool = True
    ) -> None:
        """Append ``{ "k": v, … }``: keys at ``indent`` + 2, the closing brace at ``indent``;
        ``close=False``: open, more pairs follow; a value ``Layout`` (a nested object) is
        spliced in."""
        inner = " " * (indent + 2)
        self.add("{\n")
        for i, (key, value) in enumerate(pairs):
            self.add(f"{inner}{orjson.dumps(key).decode()}: ")
            if isinstance(value, Layout):
                self.add(*value.pieces)
            else:
                self.add(value)
            self.add(",\n" if i < len(pairs) - 1 or not close else "\n")
        if close:
            self.add(" " * indent + "}")

    def grid(self, texts: Texts) -> np.ndarray:
        """Each row's pieces as indices into ``texts`` (rows x pieces); a literal next to a
        value of few distinct texts is joined to them, so fewer pieces are taken."""
        folded: list[str | Encoded] = []
        for p in self.pieces:
            last = folded[-1] if folded else None
            if isinstance(p, str):
                if isinstance(last, Encoded) and self._few(last):
                    folded[-1] = _joined(last, "", p)
                else:
                    folded.append(p)
            elif isinstance(last, str) and self._few(p):
                folded[-1] = _joined(p, last, "")
            else:
                folded.append(p)
        grid = np.empty((self.rows, len(folded)), dtype=np.int64)
        for j, q in enumerate(folded):
            if isinstance(q, str):
                grid[:, j] = texts.literal(q)
            else:
                grid[:, j] = q.codes + texts.base(q.texts)
        return grid

    def _few(self, value: Encoded) -> bool:
        return len(value.texts) * 8 <= self.rows


def _joined(value: str | Encoded, before: str, after: str) -> str | Encoded:
    """``value`` with ``before`` and ``after`` around each of its texts."""
    if isinstance(value, str):
        return before + value + after
    pre, post = pa.scalar(before.encode(), BYTES), pa.scalar(after.encode(), BYTES)
    texts = pc.binary_join_element_wise(pre, value.texts, post, pa.scalar(b"", BYTES))
    return Encoded(value.codes, texts)


def _nested(pre: np.ndarray, items: np.ndarray, bounds: np.ndarray, post: np.ndarray) -> np.ndarray:
    """Row i's pieces ``pre[i]``, then those of its items ``bounds[i]``..``bounds[i + 1]``, then
    ``post[i]``, end to end for all rows."""
    n, k1 = pre.shape
    k3 = items.shape[1]
    k2 = post.shape[1]
    counts = np.diff(bounds)
    size = k1 + counts * k3 + k2
    start = np.concatenate([[0], np.cumsum(size)]).astype(np.int64)
    flat = np.empty(int(start[-1]), dtype=np.int64)
    flat[(start[:-1, None] + np.arange(k1)).ravel()] = pre.ravel()
    if len(items):
        entry = np.repeat(np.arange(n), counts)
        at = start[entry] + k1 + (np.arange(len(items)) - bounds[entry]) * k3
        flat[(at[:, None] + np.arange(k3)).ravel()] = items.ravel()
    flat[((start[:-1] + k1 + counts * k3)[:, None] + np.arange(k2)).ravel()] = post.ravel()
    return flat


def _choice(flags: np.ndarray, yes: str, no: str) -> Encoded:
    """``yes`` where ``flags`` holds, else ``no``."""
    texts = pa.array([yes.encode(), no.encode()], BYTES)
    return Encoded(np.where(flags, 0, 1).astype(np.int64), texts)


def _fingerprints(
    table: pa.Table, rows: np.ndarray, contract: Callable[[str], dict[str, Any]]
) -> Encoded:
    """``baseline.fingerprint`` of the rows ``rows`` of ``table`` as JSON strings, computed
    once per distinct input (the evidence sentence counts only where the guarantee has no
    pattern)."""
    from sponsio_audit.report.baseline import fingerprint

    names = ["contract_id", "guarantee", "guarantee_text", "tool", "evidence"]
    if "matched" in table.column_names:
        names.append("matched")
    sub = table.select(names).take(pa.array(rows))
    codes = {n: _key(sub.column(n)) for n in names}
    pair = _dense(codes["contract_id"], codes["guarantee"])
    _, first_of_pair = np.unique(pair, return_index=True)
    patterned = np.zeros(int(pair.max()) + 1, dtype=bool)
    cids = sub.column("contract_id").take(pa.array(first_of_pair)).to_pylist()
    gs = sub.column("guarantee").take(pa.array(first_of_pair)).to_pylist()
    for k, cid, g in zip(first_of_pair.tolist(), cids, gs, strict=True):
        ps = contract(str(cid)).get("patterns") or []
        patterned[pair[k]] = bool(int(g) < len(ps) and ps[int(g)])
    evidence = np.where(patterned[pair], -1, codes["evidence"])
    key = pair
    for n in names[2:]:
        key = _dense(key, evidence if n == "evidence" else codes[n])
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    picked = sub.take(pa.array(first)).to_pylist()
    fps = [f'"{fingerprint(v, contract(str(v["contract_id"])))}"'.encode() for v in picked]
    return Encoded(np.asarray(inverse, dtype=np.int64).ravel(), pa.array(fps, BYTES))


def _key(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """One integer per distinct value of a column (nulls one more): equal values, equal keys."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return _codes(column)[0]


def _dense(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One dense code per distinct pair (a, b) of codes."""
    b = b - b.min() if len(b) else b
    joint = a.astype(np.int64) * (int(b.max()) + 1 if len(b) else 1) + b
    return np.asarray(np.unique(joint, return_inverse=True)[1], dtype=np.int64).ravel()


def violations_json(
    table: pa.Table, contract: Callable[[str], dict[str, Any]], indent: int = 4
) -> Iterable[bytes | memoryview]:
    """The JSON text (UTF-8, in pieces to write one after the other) of the ``violations``
    array (items at ``indent``; ``table`` in report order), as ``jsonenc.dumps`` indents it
    inside the report document, the code points ``xmlchars.legal`` replaces already replaced."""
    blamed_mask = pc.fill_null(table.column("blamed"), False).to_numpy(zero_copy_only=False)
    blamed = np.flatnonzero(blamed_mask)
    if not len(blamed):
        return [b"[]"]
    pad = " " * indent
    enc = {name: encoded(table.column(name)) for _, name in EVENT_KEYS}
    # the others of each (trace, contract, guarantee): its non-blamed rows in report order
    key = _group_codes(table)
    others = np.flatnonzero(~blamed_mask)
    others = others[np.argsort(key[others], kind="stable")]
    okey = key[others]
    lo = np.searchsorted(okey, key[blamed], side="left")
    hi = np.searchsorted(okey, key[blamed], side="right")
    counts = hi - lo
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    step = np.arange(int(bounds[-1]), dtype=np.int64) - np.repeat(bounds[:-1], counts)
    item_rows = others[np.repeat(lo, counts) + step]
    first = np.zeros(len(step), dtype=bool)
    first[bounds[:-1][counts > 0]] = True
    items = Layout(len(item_rows))
    items.add(_choice(first, "\n", ",\n"), pad + "    ")
    items.obj([(k, enc[c].take(item_rows)) for k, c in EVENT_KEYS], indent + 4)
    event = Layout(len(blamed))
    event.obj([(k, enc[c].take(blamed)) for k, c in EVENT_KEYS], indent + 2)
    empty = counts == 0

    at = pa.array(blamed)

    def col(name: str) -> Encoded:
        return encoded(table.column(name).take(at))

    pre = Layout(len(blamed))  # an entry up to its offending events
    pre.add(",\n" + pad)
    pre.obj(
        [
            ("trace_id", col("trace_id")),
            ("contract_id", col("contract_id")),
            ("guarantee", col("guarantee")),
            ("guarantee_text", col("guarantee_text")),
            ("kind", col("kind")),
            ("severity", col("severity")),
            ("strategy", col("strategy")),
            ("blamed", event),
            ("opened_seq", col("opened_seq")),
        ],
        indent,
        close=False,
    )
    pre.add(pad + '  "offending": ', _choice(empty, "[]", "["))
    post = Layout(len(blamed))  # the rest of the entry
    post.add(_choice(empty, "", f"\n{pad}  ]"), ",\n" + pad + '  "fingerprint": ')
    post.add(_fingerprints(table, blamed, contract), "\n" + pad + "}")
    texts = Texts()
    flat = _nested(pre.grid(texts), items.grid(texts), bounds, post.grid(texts))
    body = texts.written(flat, skip=2)  # no first ",\n"
    return itertools.chain([b"[\n"], body, [b"\n", b" " * (indent - 2) + b"]"])


def _group_codes(table: pa.Table) -> np.ndarray:
    """One integer per distinct (trace, contract, guarantee) of the rows."""
    t = _key(table.column("trace_id"))
    c = _key(table.column("contract_id"))
    g = table.column("guarantee").to_numpy().astype(np.int64)
    g = g - g.min()
    width_g = int(g.max()) + 1
    width_c = int(c.max()) + 1
    return (t * width_c + c) * width_g + g
