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

from sponsio_audit.threads import cpus, ordered_map

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
ENTRY_KEYS = (
    "trace_id",
    "contract_id",
    "guarantee",
    "guarantee_text",
    "kind",
    "severity",
    "strategy",
    "opened_seq",
)
"""Keys of an entry before its offending events (``blamed`` goes before ``opened_seq``)."""
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
PARALLEL_ROWS = 20_000
"""Rows from which the columns are encoded on two threads (fewer: the threads cost more)."""
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
    if pa.types.is_integer(t):  # each distinct number formatted once, as a string is
        codes, values = _codes(column)
        texts = pc.cast(values, pa.large_string()).cast(BYTES)
        return Encoded(codes, pa.concat_arrays([texts, pa.array([b"null"], BYTES)]))
    if pa.types.is_boolean(t):
        valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        truth = pc.fill_null(column, False).to_numpy(zero_copy_only=False)
        codes = np.where(valid, truth.astype(np.int64), 2)
        return Encoded(codes, pa.array([b"false", b"true", b"null"], BYTES))
    codes, values = _codes(column)
    texts = _quoted(values.cast(pa.large_string()))
    return Encoded(codes, pa.concat_arrays([texts, pa.array([b"null"], BYTES)]))


def _codes(column: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(per-row index into the distinct values, the values) of a string, integer or dictionary
    column; a null's index is ``len(values)``."""
    enc = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
    values = enc.dictionary
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    indices = enc.indices
    if indices.null_count:
        indices = pc.fill_null(indices.cast(pa.int64()), len(values))
    return np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64), values


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
        value of few distinct texts is joined to them, and so are two such values next to each
        other while their pairs are few, so fewer pieces are taken."""
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
            elif isinstance(last, Encoded) and len(last.texts) * len(p.texts) * 8 <= self.rows:
                folded[-1] = _paired(last, p)
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


def _paired(first: Encoded, then: Encoded) -> Encoded:
    """``first`` then ``then`` as one value: a text for each pair of their texts."""
    n, m = len(first.texts), len(then.texts)
    a = first.texts.take(pa.array(np.repeat(np.arange(n), m)))
    b = then.texts.take(pa.array(np.tile(np.arange(m), n)))
    texts = pc.binary_join_element_wise(a, b, pa.scalar(b"", BYTES))
    return Encoded(first.codes * m + then.codes, texts)


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
    table: pa.Table,
    rows: np.ndarray,
    contract: Callable[[str], dict[str, Any]],
    enc: dict[str, Encoded],
) -> Encoded:
    """``baseline.fingerprint`` of the rows ``rows`` of ``table`` as JSON strings, computed
    once per distinct input (the evidence sentence counts only where the guarantee has no
    pattern); the inputs told apart by their codes in ``enc`` (the columns encoded once)."""
    from sponsio_audit.report.baseline import fingerprint

    names = ["contract_id", "guarantee", "guarantee_text", "tool", "evidence"]
    if "matched" in enc:
        names.append("matched")
    codes = {n: enc[n].codes[rows] for n in names}
    pair = _dense(codes["contract_id"], codes["guarantee"])
    first_of_pair = _firsts(pair)
    patterned = np.zeros(len(first_of_pair), dtype=bool)
    at = pa.array(rows[first_of_pair])
    cids = table.column("contract_id").take(at).to_pylist()
    gs = table.column("guarantee").take(at).to_pylist()
    for k, (cid, g) in enumerate(zip(cids, gs, strict=True)):
        ps = contract(str(cid)).get("patterns") or []
        patterned[k] = bool(int(g) < len(ps) and ps[int(g)])
    evidence = np.where(patterned[pair], -1, codes["evidence"])
    key = pair
    for n in names[2:]:
        key = _dense(key, evidence if n == "evidence" else codes[n])
    first = _firsts(key)
    picked = table.select(names).take(pa.array(rows[first])).to_pylist()
    fps = [f'"{fingerprint(v, contract(str(v["contract_id"])))}"'.encode() for v in picked]
    return Encoded(key, pa.array(fps, BYTES))


def _firsts(dense: np.ndarray) -> np.ndarray:
    """The first row of each code of dense codes 0..m-1 (every code present)."""
    first = np.empty(int(dense.max()) + 1 if len(dense) else 0, dtype=np.int64)
    first[dense[::-1]] = np.arange(len(dense) - 1, -1, -1)  # the last write is the first row
    return first


def _dense(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One dense code per distinct pair (a, b) of codes, numbered in the pairs' order."""
    b = b - b.min() if len(b) else b
    joint = a.astype(np.int64) * (int(b.max()) + 1 if len(b) else 1) + b
    if not len(joint):
        return joint
    low = int(joint.min())
    span = int(joint.max()) - low + 1
    if span > 4 * len(joint) + 4096:  # sparse: sort the pairs
        return np.asarray(np.unique(joint, return_inverse=True)[1], dtype=np.int64).ravel()
    seen = np.zeros(span, dtype=bool)
    seen[joint - low] = True
    return (np.cumsum(seen, dtype=np.int64) - 1)[joint - low]


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
    names = [*(name for _, name in EVENT_KEYS), *ENTRY_KEYS]
    if "matched" in table.column_names:
        names.append("matched")
    names = list(dict.fromkeys(names))
    workers = min(2, cpus()) if table.num_rows >= PARALLEL_ROWS else 1  # Arrow frees the GIL
    columns = ordered_map(encoded, [table.column(n) for n in names], workers)
    enc = dict(zip(names, columns, strict=True))  # each column encoded once
    # the others of each (trace, contract, guarantee): its non-blamed rows in report order
    key = _group_codes(enc)
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
    pre = Layout(len(blamed))  # an entry up to its offending events
    pre.add(",\n" + pad)
    pairs: list[tuple[str, Encoded | Layout]] = [(k, enc[k].take(blamed)) for k in ENTRY_KEYS]
    pairs.insert(ENTRY_KEYS.index("opened_seq"), ("blamed", event))
    pre.obj(pairs, indent, close=False)
    pre.add(pad + '  "offending": ', _choice(empty, "[]", "["))
    post = Layout(len(blamed))  # the rest of the entry
    post.add(_choice(empty, "", f"\n{pad}  ]"), ",\n" + pad + '  "fingerprint": ')
    post.add(_fingerprints(table, blamed, contract, enc), "\n" + pad + "}")
    texts = Texts()
    flat = _nested(pre.grid(texts), items.grid(texts), bounds, post.grid(texts))
    body = texts.written(flat, skip=2)  # no first ",\n"
    return itertools.chain([b"[\n"], body, [b"\n", b" " * (indent - 2) + b"]"])


def _group_codes(enc: dict[str, Encoded]) -> np.ndarray:
    """One integer per distinct (trace, contract, guarantee) of the rows."""
    t, c, g = (enc[n].codes for n in ("trace_id", "contract_id", "guarantee"))
    width_g = int(g.max()) + 1
    width_c = int(c.max()) + 1
    return (t * width_c + c) * width_g + g
