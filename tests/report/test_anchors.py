"""The HTML anchors of trace timelines: one per trace, never shared, whatever the trace ids.

A trace id is untrusted: ids that sanitize alike (``a{``, ``a|`` → ``a_``)
or that look like another trace's suffixed anchor (``a_-2``) must still
give every trace its own ``id``, or a link opens another trace's timeline.
"""

from __future__ import annotations

import hashlib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsio_audit.report.htmltimeline import anchors

_ID = re.compile(r"trace-[A-Za-z0-9_.:-]+")  # an HTML id token: no whitespace, not empty
_short = st.text(alphabet="a_{|", min_size=1, max_size=2)  # sanitize alike: a_ a{ a| …
# an id that looks like another trace's suffixed anchor: "a_-2", "a_-2-1"
_forged = st.builds(
    lambda head, tails: head + "".join(f"-{t}" for t in tails),
    _short,
    st.lists(st.integers(0, 8), min_size=1, max_size=2),
)
trace_ids = st.lists(
    st.one_of(_short, _forged, st.text(max_size=12)),  # any unicode, punctuation, digits
    unique=True,
    max_size=14,
)


def _check(ids: list[str]) -> None:
    out = anchors(ids)
    assert set(out) == set(ids)  # each trace has its own entry
    names = [out[t] for t in ids]
    assert len(set(names)) == len(ids), out  # pairwise distinct: the map is injective
    for name in names:
        assert _ID.fullmatch(name), name


def test_ids_that_sanitize_alike_get_distinct_anchors() -> None:
    ids = ["a_-2", "a{", "a|"]
    _check(ids)
    out = anchors(ids)
    assert out["a_-2"] == "trace-a_-2"  # the readable prefix is kept when it is free
    assert out["a|"] != out["a_-2"]
    # an id spelling the suffixed anchor another trace gets (a hash of "a{") is still its own
    suffix = hashlib.sha256(b"a{").hexdigest()[:8]
    _check(["a_", "a{", f"a_-{suffix}", f"a_-{suffix}-1"])
    _check([f"a_-{suffix}-1", f"a_-{suffix}", "a_", "a{"])


@settings(max_examples=500)
@given(trace_ids)
def test_anchors_are_distinct_valid_ids_for_any_trace_ids(ids: list[str]) -> None:
    _check(ids)
