"""Hypothesis strategies for atom tests: random traces and random atoms of the registry."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

from sponsio_audit.atoms import registry
from sponsio_audit.event import EVENT_SCHEMA, EVENT_TYPES, Event, event_row
from sponsio_audit.ltl.ast import Atom

RECORDED_TOOLS = [
    "bash",
    "Bash",
    "issue_refund",
    "mcp__fin__issue_refund",
    "MCP__Fin__Issue_Refund",
    "mcp__other__issue_refund",
    "mcp__fin__",
    "read_file",
    None,
]
AGENTS = ["a", "b", "c", None]
STRINGS = ["", "a", "rm -rf /data/x", "RM  -rf ~/y", "/data2/z", "./x", "12.5", " 7 ", "héllo"]
STRINGS += ["x=/data/../etc", "//data///x/", '{"path":1}', "1e999", "true", "admin", "null"]
STRINGS += ["PASS", "pass", "UNDERDETERMINED", "clarify"]
STRINGS += ["<redacted>", "<redacted>"]  # an exporter's hidden secret (SEMANTICS.md §2)
TEXT = st.sampled_from(STRINGS)
SCALAR = st.one_of(
    st.sampled_from(
        [None, True, False, 0, 5, 5.0, -3, 2.5, -0.0, 1e300, 10**20, 10**400, float("nan")]
    ),
    TEXT,
)
JSONV = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2),
        st.dictionaries(st.sampled_from(["path", "n", "b", "x"]), inner, max_size=2),
    ),
    max_leaves=4,
)
KEYS = st.sampled_from(["path", "command", "a", "a.b", "n", "file", "k", "role", 'q"k'])
ARGS = st.one_of(
    st.none(),
    st.just({}),
    st.dictionaries(KEYS, JSONV, max_size=3),
    st.sampled_from(
        [
            {"command": "rm -rf /data/x"},
            {"path": "/data/../etc/passwd"},
            {"path": ["/data/a", "/data2"]},
            {"a": {"b": "é"}},
            {"n": "12.5"},
            {"n": True},
            {"role": "admin"},
            {"verdict": "PASS", "action": "release"},
            {"verdict": "underdetermined", "action": "CLARIFY"},
            {"verdict": None},
            {"command": "<redacted>"},
            {"path": "/data/x", "token": "<redacted>"},
            {"a": "<redacted>", "n": 5},
            {"input": "{'command': 'rm -rf /data/x'}"},  # text that is not JSON
            {"input": '{"path": "/data/x", "command": "rm -r'},
            {"input": " [1, 2"},
            {"input": "\n\t{'path': '/etc'}"},  # escaped white space before the brace
            {"input": "\x0b{'path': '/etc'}"},  # not JSON white space: plain text
            {"input": "{}"},
            {"input": "rm -rf /data/x"},
        ]
    ),
)
MAYBE_TEXT = st.one_of(st.none(), TEXT)
TOKENS = st.one_of(st.none(), st.integers(0, 50))


@st.composite
def events(draw: Any, trace_id: str = "", n: int = 8) -> list[Event]:
    """One trace of random events of every type."""
    out = []
    for seq in range(draw(st.integers(0, n))):
        out.append(
            Event(
                type=draw(st.sampled_from(EVENT_TYPES)),
                tool=draw(st.sampled_from(RECORDED_TOOLS)),
                args=draw(ARGS),
                content=draw(MAYBE_TEXT),
                prompt=draw(MAYBE_TEXT),
                system_prompt=draw(st.sampled_from([None, "", "sys"])),
                agent=draw(st.sampled_from(AGENTS)),
                target=draw(st.sampled_from(AGENTS)),
                tokens_in=draw(TOKENS),
                tokens_out=draw(TOKENS),
                tokens_total=draw(TOKENS),
                duration_ns=draw(st.one_of(st.none(), st.integers(0, 3_000_000))),
                trace_id=trace_id,
                seq=seq,
            )
        )
    return out


@st.composite
def traces(draw: Any, max_traces: int = 3) -> list[list[Event]]:
    """Several traces, ids sorted so the table is in (trace_id, seq) order."""
    k = draw(st.integers(1, max_traces))
    return [draw(events(trace_id=f"t{i}")) for i in range(k)]


def table_of(traces: list[list[Event]]) -> pa.Table:
    """The events table of ``traces`` (already in (trace_id, seq) order)."""
    rows = [event_row(e) for tr in traces for e in tr]
    return pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)


POOLS: dict[str, st.SearchStrategy[Any]] = {
    "tool": st.sampled_from(["bash", "issue_refund", "mcp__fin__issue_refund", "READ_FILE", "x"]),
    "regex": st.sampled_from(["rm", r"(?i)RM\s+-rf", "é", r"^\{", r"\d+", '"path"', "a", ""]),
    "field": st.sampled_from(["path", "command", "a.b", "a", "n", "missing", 'q"k']),
    "value": st.sampled_from(
        ["x", 5, "5", 5.0, 2.5, 0, 10**20, "true", "admin", "/data/x", "null", "PASS", "clarify"]
    ),
    "path": st.sampled_from(["/data", "/", "~", ".", "/etc", "data"]),
    "number": st.sampled_from([0, 1, 2.5]),
    "perm": st.sampled_from(["admin", "read"]),
    "key": st.sampled_from(["role", "k", "n", "path"]),
    "agent": st.sampled_from(["a", "b", "c"]),
    "kind": st.sampled_from(["input", "output", "total"]),
    "pred": st.sampled_from(["bash", "date_weekday_agreement", "READ_FILE"]),
}


@st.composite
def atom_of(draw: Any, spec: registry.AtomSpec) -> Atom:
    """A random instance of a registered atom (aliases too)."""
    name = draw(st.sampled_from((spec.name, *spec.aliases)))
    args = [draw(POOLS[p.kind]) for p in spec.params]
    if spec.variadic:
        args += draw(st.lists(POOLS[spec.params[-1].kind], max_size=2))
    return Atom(name, tuple(args))


ALL_ATOMS = st.tuples(*(atom_of(s) for s in registry.ATOMS))
"""One random instance of every registered atom."""

PERMISSIONS = st.sampled_from(
    [None, frozenset({"admin"}), {"a": frozenset({"admin", "read"}), "b": frozenset({"read"})}]
)
