"""The stored raw attributes are the recorded ones, whatever the conventions read from them.

OpenLLMetry's indexed messages (``gen_ai.prompt.N.role``) are rebuilt into
message objects (``flat_messages.unflatten``). When a span also records an object
value on a shorter key of the same path (``gen_ai.prompt.0`` as an OTLP
``kvlistValue``), that rebuilding must extend a copy: it once added ``role``
to the recorded object itself, and ``spans.attributes``, written after the
facts, then said the span had recorded it. The span is made by the real SDK,
the object value set on its protobuf request.
"""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.proto.common.v1.common_pb2 import KeyValue

from .conftest import events, load, make_otel, rows


def test_an_object_value_under_an_indexed_prefix_is_stored_as_recorded(tmp_path: Path) -> None:
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.prompt.0": "-",
             "gen_ai.prompt.0.role": "user", "gen_ai.completion.0.content": "hi"}  # fmt: skip
    req = make_otel.spans_request([{"name": "chat m", "start": 0, "end": 4, "attrs": attrs}], "s")
    for kv in req.resource_spans[0].scope_spans[0].spans[0].attributes:
        if kv.key == "gen_ai.prompt.0":
            kv.value.kvlist_value.values.append(
                KeyValue(key="content", value={"string_value": "x"})
            )
    make_otel.write_all(tmp_path / "t", [req])
    for ext in (".jsonl", ".pb"):
        store, _ = load(tmp_path / f"t{ext}", db=tmp_path / f"t{ext}.duckdb")
        (sp,) = rows(store, "SELECT attributes::VARCHAR AS a FROM spans")
        recorded = json.loads(sp["a"])
        assert recorded["gen_ai.prompt.0"] == {"content": "x"}  # not extended with "role"
        assert recorded["gen_ai.prompt.0.role"] == "user"
        assert events(store)[0]["prompt"] == "user: x"  # what the conventions read of it
        store.close()
