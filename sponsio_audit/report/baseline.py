"""Baselines: accept today's violations, fail only on new ones, whatever traces come tomorrow.

A violation's **fingerprint** is the sha256 (hex) of the five lines

    contract id
    guarantee text
    tool of the blamed event ("" when none)
    evidence class
    matched argument (normalised; "" when the guarantee matches no argument)

and never the trace id, the step or the time: a nightly job sees new
traces every night, and the same finding in a new trace must still be
known. The **evidence class** is ``pattern:<name>`` when the guarantee
comes from a pattern, and otherwise the evidence sentence with every run
of digits replaced by ``#``. The **matched argument** is what the
guarantee's regex atoms matched in the blamed event (the text of the first
match of ``arg_field_has``/``arg_has``/``output_has``/``llm_output_contains``/
``llm_input_contains``, or the paths outside the prefixes of
``arg_paths_within``), lower-cased, with runs of white space made one
space and runs of digits ``#``: ``rm -rf /`` and ``rm -rf ~`` are two
findings, two SSNs one. It is filled in by ``with_matches`` from the
store's events; only its hash enters the fingerprint, so a baseline never
holds a secret the trace held.

The baseline file is JSON (``"schema": "sponsio-audit/baseline/2"``) with
the sorted fingerprints and, for people reading it, the contract,
guarantee, tool, class and how many violations each stood for. A file of
schema 1 (fingerprints with trace ids) is refused with a message to write
it again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sponsio_audit.atoms.arrays import nonzero
from sponsio_audit.ingest.store import prompt_sql
from sponsio_audit.report.data import ReportData
from sponsio_audit.verdicts import group_rows

SCHEMA = "sponsio-audit/baseline/2"
OLD_SCHEMAS = ("sponsio-audit/baseline/1",)
_FINGERPRINT = re.compile("[0-9a-f]{64}")
MAX_MATCHED = 200
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_REGEX_ATOMS = {  # atom -> (where it looks, index of the regex argument)
    "arg_field_has": ("field", 2),
    "arg_has": ("args", 1),
    "called_with": ("args", 1),
    "output_has": ("content", 1),
    "llm_output_contains": ("content", 0),
    "llm_said": ("content", 0),
    "llm_input_contains": ("prompt", 0),
    "prompt_contains": ("prompt", 0),
}
_TOOL_ATOMS = {"arg_field_has", "arg_has", "called_with", "output_has", "arg_paths_within"}


class BaselineError(ValueError):
    """A baseline file that cannot be read."""


def normalise(text: str) -> str:
    """A matched argument as it is compared: lower case, one space, digits as ``#``, capped."""
    return _DIGITS.sub("#", _SPACE.sub(" ", text.strip().lower()))[:MAX_MATCHED]


def evidence_class(violation: dict[str, Any], contract: dict[str, Any]) -> str:
    """The evidence class of a violation row (see module docstring)."""
    g = int(violation["guarantee"])
    patterns = contract.get("patterns") or []
    pattern = patterns[g] if g < len(patterns) else None
    if pattern:
        return f"pattern:{pattern}"
    return _DIGITS.sub("#", str(violation["evidence"]))


def guarantee_text(violation: dict[str, Any], contract: dict[str, Any]) -> str:
    """The text of the violated guarantee (the row's, else the contract's)."""
    text = violation.get("guarantee_text")
    if text:
        return str(text)
    g = int(violation["guarantee"])
    texts = contract.get("guarantees") or []
    return str(texts[g]) if g < len(texts) else str(g)


def fingerprint(violation: dict[str, Any], contract: dict[str, Any]) -> str:
    """The fingerprint of one violation (a blamed row of the ``violations`` table)."""
    parts = (
        str(violation["contract_id"]),
        guarantee_text(violation, contract),
        str(violation["tool"] or ""),
        evidence_class(violation, contract),
        str(violation.get("matched") or ""),
    )
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1024)
def _atoms(text: str) -> tuple[Any, ...]:
    """The atoms of a guarantee formula in reading order (none when it does not parse; cached:
    every blamed violation of a guarantee asks)."""
    from sponsio_audit.ltl import ast
    from sponsio_audit.ltl.parse import parse

    try:
        formula = parse(text)
    except Exception:  # a guarantee written by a newer version: no matched argument
        return ()
    found: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, ast.Atom):
            found.append(node)
            return
        for value in vars(node).values():
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                if hasattr(item, "__dataclass_fields__"):
                    walk(item)

    walk(formula)
    return tuple(found)


def _search(regex: str, text: str) -> str | None:
    from sponsio_audit.regexes import RegexError, compile_regex

    try:
        m = compile_regex(regex).search(text)
    except RegexError:  # a regex RE2 rejects is a skipped clause; it matched nothing
        return None
    return m.group(0) if m is not None else None


def matched_argument(guarantee: str, event: dict[str, Any]) -> str:
    """What the guarantee's atoms matched in ``event`` (normalised; "" when nothing)."""
    from sponsio_audit.atoms.fields import (
        HIDDEN,
        MISSING,
        arg_text,
        field_value,
        tool_key,
        tool_matches,
    )
    from sponsio_audit.atoms.paths import normalise as norm_path
    from sponsio_audit.atoms.paths import path_values, under

    try:
        args = json.loads(event["args"]) if event.get("args") else None
    except ValueError:
        args = None
    for atom in _atoms(guarantee):
        name, a = atom.name, atom.args
        if name in _TOOL_ATOMS and (not a or not tool_matches(tool_key(str(a[0])), event["tool"])):
            continue
        if name == "arg_paths_within":
            prefixes = [norm_path(str(p)) for p in a[1:]]
            outside = sorted(
                p for p in path_values(args) if not any(under(norm_path(p), q) for q in prefixes)
            )
            if outside:
                return normalise(" ".join(outside))
            continue
        if name not in _REGEX_ATOMS:
            continue
        where, i = _REGEX_ATOMS[name]
        if len(a) <= i:
            continue
        if where == "field":
            value = field_value(args, str(a[1])) if args is not None else MISSING
            text = None if value is MISSING or value is HIDDEN else arg_text(value)
        elif where == "args":
            text = event.get("args")
        else:
            text = event.get(where)
        found = _search(str(a[i]), text) if text else None
        if found:
            return normalise(found)
    return ""


def reads_events(guarantee: str) -> bool:
    """Whether ``matched_argument`` of ``guarantee`` can be other than "" (an atom that
    matches an argument: a regex atom or ``arg_paths_within``)."""
    return any(a.name in _REGEX_ATOMS or a.name == "arg_paths_within" for a in _atoms(guarantee))


def with_matches(store: Any, data: ReportData) -> ReportData:
    """``data`` with each blamed violation's ``matched`` argument, read from the store's events
    (a ``matched`` column: null on the other rows and where the blamed event is not stored;
    the events are read only for guarantees whose atoms match arguments)."""
    table = data.violation_table
    blamed = pc.fill_null(pc.and_(table.column("blamed"), pc.is_valid(table.column("seq"))), False)
    if not pc.any(blamed).as_py():
        return data
    at = nonzero(blamed)
    names = ("trace_id", "seq", "contract_id", "guarantee", "guarantee_text")
    picked = table.select(list(names)).take(at)
    texts: dict[tuple[Any, ...], str] = {}
    groups = picked.select(["contract_id", "guarantee", "guarantee_text"])
    for row in _distinct(groups).to_pylist():
        cid, g, text = row["contract_id"], row["guarantee"], row["guarantee_text"]
        texts[(cid, g, text)] = guarantee_text(
            {"guarantee": g, "guarantee_text": text}, data.contract(cid)
        )
    wanted = {k for k, gt in texts.items() if reads_events(gt)}
    need = np.asarray(_in_keys(groups, wanted).to_numpy(zero_copy_only=False), dtype=bool)
    cur = store.con.cursor()  # read only: list parameters, no table registered
    try:
        stored = _stored(cur, picked)
        ask = np.flatnonzero(need | (stored < 0))  # events read one by one
        found = (
            _NO_EVENTS
            if not len(ask)
            else cur.sql(
                "SELECT k.i, k.need, "
                "CASE WHEN k.need THEN e.tool END AS tool, "
                "CASE WHEN k.need THEN e.args END AS args, "
                "CASE WHEN k.need THEN e.content END AS content, "
                f"CASE WHEN k.need THEN {prompt_sql('e')} END AS prompt "
                "FROM (SELECT unnest($i) AS i, unnest($t) AS trace_id, unnest($s) AS seq, "
                "unnest($n) AS need) k "
                "JOIN events e ON e.trace_id = k.trace_id AND e.seq = k.seq",
                params={
                    "i": ask.tolist(),
                    "t": picked.column("trace_id").take(pa.array(ask)).to_pylist(),
                    "s": picked.column("seq").take(pa.array(ask)).to_pylist(),
                    "n": need[ask].tolist(),
                },
            ).to_arrow_table()
        )
    finally:
        cur.close()
    matched = np.where(stored > 0, 0, -1)  # 0: "", -1: no event stored
    matched[found.column("i").to_numpy().astype(np.int64)] = 0
    values = [""]
    need = found.filter(found.column("need"))
    if need.num_rows:
        cols = [picked.column(n).take(need.column("i")).to_pylist() for n in names[2:]]
        events = zip(
            *(need.column(n).to_pylist() for n in ("tool", "args", "content", "prompt")),
            strict=True,
        )
        seen: dict[tuple[Any, ...], int] = {}
        for i, cid, g, text, event in zip(need.column("i").to_pylist(), *cols, events, strict=True):
            key = (texts[(cid, g, text)], *event)
            code = seen.get(key)
            if code is None:
                tool, args, content, prompt = event
                found_text = matched_argument(
                    key[0], {"tool": tool, "args": args, "content": content, "prompt": prompt}
                )
                code = seen[key] = len(values)
                values.append(found_text)
            matched[i] = code
    codes = pa.array(matched, mask=matched < 0)
    full = pc.take(pc.take(pa.array(values, pa.string()), codes), _scatter(at, table.num_rows))
    if "matched" in table.column_names:
        table = table.drop_columns(["matched"])
    return replace(data, violation_table=table.append_column("matched", full))


_NO_EVENTS = pa.table(
    {
        "i": pa.array([], pa.int64()),
        "need": pa.array([], pa.bool_()),
        **{n: pa.array([], pa.string()) for n in ("tool", "args", "content", "prompt")},
    }
)
"""What the events query gives when no event is asked for."""


def _stored(cur: Any, picked: pa.Table) -> np.ndarray:
    """Per picked (trace_id, seq): 1 when the event is stored, 0 when not, -1 when unknown from
    the traces' step counts (a trace whose steps are not 0..n-1; read one by one)."""
    steps = cur.sql(
        "SELECT trace_id, count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM events GROUP BY ALL"
    ).to_arrow_table()
    at = pc.index_in(picked.column("trace_id"), value_set=steps.column("trace_id"))
    n = steps.column("n").to_numpy()
    whole = (steps.column("lo").to_numpy() == 0) & (steps.column("hi").to_numpy() == n - 1)
    known = np.asarray(pc.is_valid(at).to_numpy(zero_copy_only=False), dtype=bool)
    where = pc.fill_null(at, 0).to_numpy().astype(np.int64)
    seq = pc.fill_null(picked.column("seq"), -1).to_numpy()
    inside = (seq >= 0) & (seq < (n[where] if len(n) else 0))
    out = np.where(known, np.where(whole[where] if len(n) else False, inside, -1), 0)
    return np.asarray(out, dtype=np.int64)


def _scatter(at: pa.Array, n: int) -> pa.Array:
    """For each of ``n`` rows, its position among the rows ``at`` (null for the others)."""
    where = np.full(n, -1, dtype=np.int64)
    where[at.to_numpy()] = np.arange(len(at), dtype=np.int64)
    return pa.array(where, mask=where < 0)


def _distinct(table: pa.Table) -> pa.Table:
    """The distinct rows of ``table`` (nulls equal to nulls), each at its first occurrence
    (``verdicts.group_rows``; Arrow's ``group_by`` would import its query engine, 20 ms of
    every scan's start-up, for a handful of groups)."""
    if table.num_rows == 0:
        return table
    return table.take(group_rows(table.columns)[1])


def _in_keys(groups: pa.Table, wanted: set[tuple[Any, ...]]) -> pa.Array:
    """Per row of ``groups`` (contract id, guarantee, text): whether it is one of ``wanted``
    (a handful of guarantees: one vectorised test each)."""
    out = pa.array(np.zeros(groups.num_rows, dtype=bool))
    for key in wanted:
        hit = pa.array(np.ones(groups.num_rows, dtype=bool))
        for name, value in zip(groups.column_names, key, strict=True):
            col = groups.column(name)
            same = pc.is_null(col) if value is None else pc.fill_null(pc.equal(col, value), False)
            hit = pc.and_(hit, same)
        out = pc.or_(out, hit)
    return out


def entries(data: ReportData) -> list[dict[str, Any]]:
    """One baseline entry per fingerprint of ``data`` (sorted, with how many it stands for)."""
    out: dict[str, dict[str, Any]] = {}
    for v in data.blamed:
        c = data.contract(v["contract_id"])
        fp = fingerprint(v, c)
        if fp in out:
            out[fp]["violations"] += 1
            continue
        out[fp] = {
            "fingerprint": fp,
            "contract_id": str(v["contract_id"]),
            "guarantee": guarantee_text(v, c),
            "tool": str(v["tool"] or ""),
            "class": evidence_class(v, c),
            "violations": 1,
        }
    return [out[k] for k in sorted(out)]


def write(path: str | Path, data: ReportData) -> int:
    """Write the baseline of ``data`` to ``path``; the number of fingerprints."""
    items = entries(data)
    doc = {"schema": SCHEMA, "violations": items}
    Path(path).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return len(items)


def read(path: str | Path) -> set[str]:
    """The fingerprints recorded in a baseline file."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BaselineError(f"{path}: cannot read baseline: {e}") from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema in OLD_SCHEMAS:
        raise BaselineError(
            f"{path}: a baseline of schema {schema!r}, whose fingerprints hold trace ids; "
            "write it again with `scan --write-baseline`"
        )
    if schema != SCHEMA:
        raise BaselineError(f"{path}: not a sponsio-audit baseline (schema {SCHEMA!r})")
    items = doc.get("violations")
    if not isinstance(items, list):
        raise BaselineError(f"{path}: 'violations' must be a list")
    out = set()
    for n, item in enumerate(items):
        fp = item.get("fingerprint") if isinstance(item, dict) else None
        if not isinstance(fp, str) or not _FINGERPRINT.fullmatch(fp):
            # an entry that cannot match would report its violations as new, unexplained
            raise BaselineError(
                f"{path}: violations[{n}] has no fingerprint (64 hex digits); "
                "write it again with `scan --write-baseline`"
            )
        out.add(fp)
    return out


def apply_counted(data: ReportData, known: set[str]) -> tuple[ReportData, int]:
    """``apply``, and how many ``known`` fingerprints matched no violation (stale entries)."""
    seen = {fingerprint(v, data.contract(v["contract_id"])) for v in data.blamed}
    return apply(data, known), len(known - seen)


def apply(data: ReportData, known: set[str]) -> ReportData:
    """``data`` without the violations whose fingerprint is in ``known`` (counted as suppressed)."""
    keys: set[tuple[str, str, int]] = set()
    for v in data.blamed:
        if fingerprint(v, data.contract(v["contract_id"])) in known:
            keys.add((v["trace_id"], v["contract_id"], v["guarantee"]))
    return data.without(keys, len(keys)) if keys else data
