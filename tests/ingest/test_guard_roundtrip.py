"""The project's guard writes session logs and OTLP spans; ingest reads both back consistently."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from .conftest import events, load, make_otel, rows

guard = pytest.importorskip("sponsio_audit.guard")
otlp_export = pytest.importorskip("sponsio_audit.guard.otlp_export")
contract_mod = pytest.importorskip("sponsio_audit.ltl.contract")
parse_mod = pytest.importorskip("sponsio_audit.ltl.parse")


def _contract(cid: str, text: str, strategy: str) -> Any:
    c = contract_mod
    return c.Contract(
        id=cid,
        agent="*",
        guarantees=(c.Clause(parse_mod.parse(text)),),
        assumptions=(),
        activate_at="global",
        strategy=c.Strategy(strategy, None),
    )


class _Capture(otlp_export.OtlpHttpExporter):  # type: ignore[misc, name-defined]
    """An exporter that keeps the turns instead of sending them."""

    def __init__(self, protocol: str) -> None:
        super().__init__("http://127.0.0.1:9", protocol=protocol, service_name="guard-svc")
        self.turns: list[Any] = []

    def export(self, turn: Any) -> bool:
        self.turns.append(turn)
        return True

    def flush(self, timeout: float = 5.0) -> bool:
        return True

    def shutdown(self, timeout: float = 5.0) -> None:
        return None


CALLS = [("verify", {}), ("pay", {"amount": 1, "token": "t0k"}), ("pay", {"amount": 2})]


@pytest.mark.parametrize("protocol", ["protobuf", "json"])
def test_session_log_and_otlp_export_agree(tmp_path: Path, protocol: str) -> None:
    cs = [
        _contract("once", "G(called(pay) -> !Y called(pay))", "block"),
        _contract("verified", "G(called(pay) -> O called(verify))", "warn"),
    ]
    exp = _Capture(protocol)
    log = tmp_path / "session.jsonl"
    g = guard.Guard(cs, "bot", mode="enforce", session_log=log, exporter=exp)
    for tool, args in CALLS:
        g.guard_before(tool, args)
    g.finish()
    g.close()
    body, _, _ = exp.encode(exp.turns)
    otlp = tmp_path / ("spans.json" if protocol == "json" else "spans.pb")
    otlp.write_bytes(body if protocol == "json" else make_otel.delimited([body]))

    slog, _ = load(log)
    spans, s = load(otlp)
    assert s.skipped == 0
    by_time = sorted(events(spans), key=lambda e: e["start_ns"])
    assert [e["tool"] for e in by_time] == [t for t, _ in CALLS]
    assert [e["args"] for e in by_time] == [e["args"] for e in events(slog)]
    assert by_time[1]["args"] == '{"amount":1,"token":"<redacted>"}'
    assert {e["agent"] for e in by_time} == {"bot"}
    q = "SELECT tool, contract_id, result FROM decisions WHERE contract_id IS NOT NULL"
    got = Counter(tuple(r.values()) for r in rows(spans, q))
    want = Counter(tuple(r.values()) for r in rows(slog, q))
    assert got == want and ("pay", "once", "blocked") in got
