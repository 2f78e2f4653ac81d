"""The JSON report by orjson is byte for byte the stdlib's ``json.dumps(indent=2)``.

Random documents with odd text (non-ASCII, every control character, U+2028,
lone surrogates), floats of every magnitude (orjson spells some otherwise),
huge integers, tuples and non-string keys; the demo corpus's report; and a
larger generated corpus whose tool names, arguments and messages carry odd
strings, scanned end to end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit import api
from sponsio_audit.ltl import patterns
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.report import data as report_data
from sponsio_audit.report import jsonenc, jsonfmt
from tests.report.conftest import CONFIG, TRACES, demo, run

ODD = st.text(
    st.one_of(
        st.characters(),  # includes surrogates and control characters
        st.sampled_from('\x00\x1f\x7f\u2028\u2029\ufeff"\\\n\t\r\b\f/é€😀'),
    ),
    max_size=12,
)
SCALARS = st.one_of(
    ODD,
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e-05, 1.5e-7, 0.0001, 1e16, -0.0, 5e-324]),
    st.booleans(),
    st.none(),
)
DOCS = st.recursive(
    SCALARS,
    lambda sub: st.one_of(
        st.lists(sub, max_size=4),
        st.lists(sub, max_size=3).map(tuple),
        st.dictionaries(ODD, sub, max_size=4),
        st.dictionaries(st.integers(0, 3), sub, max_size=2),
    ),
    max_leaves=20,
)


def stdlib(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)


@settings(max_examples=500)
@given(DOCS)
def test_same_text_as_the_stdlib(doc):
    assert jsonenc.dumps(doc) == stdlib(doc)


def test_plain_documents_take_the_fast_path():
    doc = {"a": [1, "é\x01", None, True, {"b": []}], "c": {}}
    assert jsonenc._plain(doc)
    assert not jsonenc._plain({"a": [1, 2.5]})
    assert jsonenc.dumps(doc) == stdlib(doc)


def test_demo_report_is_unchanged(tmp_path: Path):
    out = tmp_path / "r.json"
    res = run("scan", TRACES, "--contracts", CONFIG, "--format", "json", "--output", out)
    assert res.exit_code == 1, res.output
    text = out.read_text(encoding="utf-8")
    assert text == stdlib(json.loads(text)) + "\n"


ODD_NAMES = ["tool\x01é", "outil_😀", "t\u2028ool", 'q"uote\\', "\x7fdel"]


def test_generated_corpus_with_odd_strings(tmp_path: Path):
    """Many traces whose tools, arguments and texts are odd: the rendered report equals
    the stdlib's text of the same document."""
    builders = {}
    for i in range(60):
        name = ODD_NAMES[i % len(ODD_NAMES)]
        args = {"x": f"v\x00{i}\u00e9\x1b", "n": i * 0.00001, "big": 2**40 + i}
        builders[f"odd{i}"] = demo._coder((name, args), (name, args), ("send_email", {"to": "ü@x"}))
    path = tmp_path / "odd.jsonl"
    lines = [demo._json_line(pb) for pb in demo._record("odd-svc", builders)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cs = []
    for name in ODD_NAMES:
        r = patterns.build("idempotent", [name])
        cs.append(Contract(f"once {name}", "*", (r.clause(),), per_agent=False))
    res = api.audit([path], cs)
    data = report_data.load(res.store, timelines=False)
    doc = jsonfmt.document(data)
    assert doc["violations"], "the corpus must produce violations to render"
    assert jsonenc._plain(doc), "a report document takes orjson's path"
    assert jsonfmt.render(data) == stdlib(doc) + "\n"
