"""Bounded conversion of untrusted attribute values to plain Python values.

Trace content is untrusted: a single attribute may be tens of megabytes or
nested thousands of levels deep. Every value kept by ingest passes through
``cap`` (strings cut at ``MAX_STR`` characters with a visible marker, nesting
cut at ``MAX_DEPTH`` levels), so memory per span is bounded and nothing
recurses without a limit. Values the store cannot hold cost only their field:
an integer outside int64 reads as None (``to_int``), a lone UTF-16 surrogate
(half an emoji, from exporters that cut strings by UTF-16 units) as U+FFFD.
"""

from __future__ import annotations

import base64
import json
import math
import re
from typing import Any

import orjson

MAX_STR = 1 << 20
"""Longest string value kept (characters); longer ones are cut and marked."""

MAX_DEPTH = 32
"""Deepest nesting of arrays/maps kept; deeper values become a marker string."""

DEPTH_MARKER = "<nested too deep>"

INT64 = 1 << 63
"""Integers ``n`` with ``-INT64 <= n < INT64`` fit the store's BIGINT columns."""

_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def cut(s: str) -> str:
    """``s`` itself, or its first ``MAX_STR`` characters with a marker of how much was cut."""
    if len(s) <= MAX_STR:
        return s
    return f"{s[:MAX_STR]}…[truncated {len(s) - MAX_STR} chars]"


def cap(v: Any, depth: int = 0) -> Any:
    """``v`` with long strings cut and deep nesting replaced (see module doc)."""
    if isinstance(v, str):
        return cut(v)
    if isinstance(v, (list, tuple)):
        if depth >= MAX_DEPTH:
            return DEPTH_MARKER
        return [cap(x, depth + 1) for x in v]
    if isinstance(v, dict):
        if depth >= MAX_DEPTH:
            return DEPTH_MARKER
        return {str(k): cap(x, depth + 1) for k, x in v.items()}
    return v


def json_any(v: Any, depth: int = 0) -> Any:
    """An OTLP/JSON ``AnyValue`` object as a Python value (capped; unknown forms → None)."""
    if not isinstance(v, dict):
        return None
    if "stringValue" in v:
        s = v["stringValue"]
        return cut(s) if isinstance(s, str) else str(s)
    if "intValue" in v:
        return to_int(v["intValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "doubleValue" in v:
        d = v["doubleValue"]
        try:
            return finite(float(d))
        except (TypeError, ValueError):
            return None
    if depth >= MAX_DEPTH:
        return DEPTH_MARKER
    if "arrayValue" in v:
        vals = (v["arrayValue"] or {}).get("values") or []
        return [json_any(x, depth + 1) for x in vals] if isinstance(vals, list) else []
    if "kvlistValue" in v:
        return json_attrs((v["kvlistValue"] or {}).get("values"), depth + 1)
    if "bytesValue" in v:
        b = v["bytesValue"]
        return cut(b) if isinstance(b, str) else None
    return None


def json_attrs(kvs: Any, depth: int = 0) -> dict[str, Any]:
    """A list of OTLP/JSON ``KeyValue`` objects as a dict (later duplicates win).

    Hot path: the common ``{"key": k, "value": {"stringValue": s}}`` and
    ``{"intValue": "n"}`` forms are read inline; every other shape takes the
    general rule, ``_json_kv``, which gives the same result for these two.
    """
    out: dict[str, Any] = {}
    if not isinstance(kvs, list):
        return out
    for kv in kvs:
        try:
            key = kv["key"]
            v = kv["value"]
        except (TypeError, KeyError, IndexError):  # not an object, or a member missing
            _json_kv(out, kv, depth)
            continue
        if type(key) is str and type(v) is dict:
            s = v.get("stringValue")
            if type(s) is str:
                out[key] = s if len(s) <= MAX_STR else cut(s)
                continue
            if len(v) == 1:
                i = v.get("intValue")
                if type(i) is str:
                    try:
                        n: int | None = int(i)
                    except ValueError:
                        n = None
                    out[key] = n if n is None or -INT64 <= n < INT64 else None
                    continue
        _json_kv(out, kv, depth)
    return out


def _json_kv(out: dict[str, Any], kv: Any, depth: int) -> None:
    """Add one OTLP/JSON ``KeyValue`` to ``out`` (ignored unless an object with a string key)."""
    if isinstance(kv, dict):
        key = kv.get("key")
        if isinstance(key, str):
            out[key] = json_any(kv.get("value"), depth)


def pb_any(v: Any, depth: int = 0) -> Any:
    """A protobuf ``AnyValue`` as a Python value, the same as ``json_any`` gives for its JSON."""
    which = v.WhichOneof("value")
    if which == "string_value":
        return cut(v.string_value)
    if which == "int_value":
        return v.int_value
    if which == "bool_value":
        return v.bool_value
    if which == "double_value":
        return finite(v.double_value)
    if which is None:
        return None
    if depth >= MAX_DEPTH:
        return DEPTH_MARKER
    if which == "array_value":
        return [pb_any(x, depth + 1) for x in v.array_value.values]
    if which == "kvlist_value":
        return pb_attrs(v.kvlist_value.values, depth + 1)
    if which == "bytes_value":
        return cut(base64.b64encode(v.bytes_value).decode("ascii"))
    return None


def pb_attrs(kvs: Any, depth: int = 0) -> dict[str, Any]:
    """Repeated protobuf ``KeyValue`` as a dict (later duplicates win).

    Hot path: a non-empty string value is taken without asking for the oneof case, an
    int value without ``pb_any``'s call.
    """
    out: dict[str, Any] = {}
    for kv in kvs:
        v = kv.value
        s = v.string_value
        if s and len(s) <= MAX_STR:
            out[kv.key] = s
        elif v.WhichOneof("value") == "int_value":
            out[kv.key] = v.int_value
        else:
            out[kv.key] = pb_any(v, depth)
    return out


def finite(d: float) -> float | str:
    """A double as is, or its spelling (``"nan"``, ``"inf"``) when not finite: JSON has none."""
    return d if math.isfinite(d) else str(d)


def to_count(v: Any) -> int | None:
    """A recorded count (tokens, a duration) as an integer, or None when it is not one:
    ``to_int``, except that a bool or a negative number is no count (``true`` is not 1
    token, and -5000 tokens would hide a run's spending: the fact is missing, so a budget
    over it is unverifiable, never a pass)."""
    if v is None or isinstance(v, bool):
        return None
    n = to_int(v)
    return n if n is None or n >= 0 else None


def to_int(v: Any) -> int | None:
    """An OTLP int64 written as a JSON number or string; None when it is neither or does
    not fit int64 (``"99999999999999999999"``, ``1e20``: the field is lost, not the record)."""
    if type(v) is str:  # the OTLP/JSON spelling: checked first
        try:
            n = int(v) if len(v) < 40 else INT64
        except ValueError:
            return None
    elif isinstance(v, bool):
        return int(v)
    elif isinstance(v, int):
        n = v
    elif isinstance(v, (str, float)):
        try:
            n = int(v)
        except (ValueError, OverflowError):
            return None
    else:
        return None
    return n if -INT64 <= n < INT64 else None


def norm_id(v: Any) -> str | None:
    """A JSON trace/span id: lower-cased when hex, else kept as an opaque string; "" → None."""
    if not isinstance(v, str) or not v:
        return None
    if _HEX_RE.fullmatch(v):
        return v.lower()
    return cut(v)


_MISS = object()
_HEX_LINES = re.compile("[0-9a-fA-F\n]*")  # a regex: 4x fewer instructions than str.strip


def trace_ids(raw: list[Any]) -> list[Any] | None:
    """``norm_id`` of each trace id of an OTLP/JSON column (a request's spans come trace by
    trace: each distinct id read once); None when one is no id."""
    ids = {v: norm_id(v) for v in set(raw)}
    if None in ids.values():
        return None
    return list(map(ids.__getitem__, raw))


def span_ids(raw: list[Any], memo: dict[Any, Any]) -> list[Any]:
    """``norm_id`` of each span id, remembered in ``memo`` (raw → read) for the parents.

    Usually all are hex: one check and one ``lower`` over the ids joined by newlines
    (a newline is no hex digit, so an id holding one leaves the split a part longer)."""
    try:
        joined = "\n".join(raw)
    except TypeError:  # not all strings
        pass
    else:
        if joined and _HEX_LINES.fullmatch(joined) and "\n\n" not in joined:
            low = joined.lower().split("\n")
            if len(low) == len(raw) and low[0] and low[-1]:
                memo.update(zip(raw, low, strict=True))
                return low
    out = []
    for v in raw:
        r = memo.get(v, _MISS)
        if r is _MISS:
            r = memo[v] = norm_id(v)
        out.append(r)
    return out


def parent_ids(raw: list[Any], memo: dict[Any, Any]) -> list[Any]:
    """``norm_id`` of each parent span id, most of them read already as a span id (``memo``)."""
    get = memo.get
    out = list(map(get, raw))
    if out.count(None) != raw.count(None):  # some not read yet (or read as no id)
        out = []
        for v in raw:
            r = get(v, _MISS)
            if r is _MISS:
                r = memo[v] = norm_id(v)
            out.append(r)
    return out


_ENCODE = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=str
).encode


ORJSON_TOO_DEEP = ("depth limit exceeded", "array and object recursion depth exceeded")
"""How orjson's error starts for nesting past its 1 024 levels (3.13; 3.11 and before)."""


def parse(text: str) -> Any:
    """JSON text as a value, as the stdlib reads it, but by orjson (4× faster on OTLP lines).

    What orjson refuses and the stdlib accepts (``NaN``/``Infinity`` literals, lone
    surrogate escapes) is read again by the stdlib, with non-finite floats spelled
    as strings (``finite``), so parsed values never hold a float JSON cannot write.
    Raises ``ValueError`` or ``RecursionError`` as ``json.loads`` does; nesting deeper
    than orjson's 1 024 levels is always a ``RecursionError``, never read by the stdlib,
    whose own limit depends on the thread (a worker's default, the main process's
    ``recursion.deep``): the same record is then read the same with any ``--jobs``.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as e:
        if str(e).startswith(ORJSON_TOO_DEEP):
            raise RecursionError("JSON nested deeper than 1024 levels") from None
        return _finite(json.loads(text))


def whole(s: str) -> str:
    """``s`` with lone UTF-16 surrogates replaced by U+FFFD (they cannot be stored as UTF-8)."""
    return _SURROGATE.sub("\ufffd", s)


def dumps(v: Any) -> str:
    """Compact strict JSON, non-ASCII kept, never raising (NaN/inf and odd values as strings).

    orjson first. It writes a non-finite float as ``null``, so when its output
    holds ``null`` the value is searched for one (``_has_nonfinite``, any depth)
    and, if found, written by the stdlib with the float spelled as a string, as
    are >64-bit integers and lone surrogates, which orjson refuses. Ingest
    decoders spell non-finite doubles as strings already (``finite``), so the
    search is rare and the hot path is orjson plus one substring search.
    """
    try:
        out = orjson.dumps(v, default=str).decode()
    except TypeError:
        pass
    else:
        if "null" not in out or not _has_nonfinite(v):
            return out
    try:
        return _ENCODE(v)
    except ValueError:
        return json.dumps(_finite(v), separators=(",", ":"), ensure_ascii=False, default=str)


def dumps_attrs(v: Any) -> str:
    """``dumps`` of a span's attribute dict as a decoder made it (``json_attrs``, ``pb_attrs``,
    ``otlp_structs``): every double there has passed ``finite``, so no float in it is
    non-finite and orjson's text is final without ``dumps``' search of it for ``null``
    (a third of the attribute JSON's cost: 1.2k instructions per span); what orjson
    refuses is still written by ``dumps``."""
    try:
        return orjson.dumps(v, default=str).decode()
    except TypeError:
        return dumps(v)


def _has_nonfinite(v: Any) -> bool:
    """Whether a non-finite float is anywhere in ``v`` (lists, tuples, dict values).

    Only called on values orjson could write, so nesting is at most its 255 levels.
    """
    if isinstance(v, float):
        return not math.isfinite(v)
    if isinstance(v, (list, tuple)):
        return any(_has_nonfinite(x) for x in v)
    if isinstance(v, dict):
        return any(_has_nonfinite(x) for x in v.values())
    return False


def _finite(v: Any) -> Any:
    """``v`` with non-finite floats replaced by their string spelling (strict JSON has none)
    and lone surrogates by U+FFFD (``whole``): the values orjson refuses and the stdlib reads."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, str):
        return whole(v)
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    if isinstance(v, dict):
        return {whole(k): _finite(x) for k, x in v.items()}
    return v


def loads_maybe(s: str) -> Any:
    """``s`` parsed as JSON, or ``s`` itself when it is not JSON (or too deep to parse)."""
    t = s.lstrip()
    if not t or t[0] not in '{["-0123456789tfn':
        return s
    try:
        return parse(s)
    except (ValueError, RecursionError):
        return s


def as_args(v: Any) -> dict[str, Any] | None:
    """Recorded tool arguments as a JSON object: parsed JSON strings, other values wrapped.

    None stays None (not recorded, SEMANTICS.md §5), and so does the JSON text
    ``null`` (a null is no recorded value: the args are missing, not ``{"input":
    null}``, so an argument contract is unverifiable there, never a pass); any other
    value that is not an object (after parsing a JSON string) becomes ``{"input": value}``.
    """
    if v is None:
        return None
    if isinstance(v, str):
        v = loads_maybe(v)
        if v is None:
            return None
    if isinstance(v, dict):
        return v
    return {"input": v}


def as_text(v: Any) -> str | None:
    """A recorded result/output value as text: strings as is, others as compact JSON."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    return dumps(v)
