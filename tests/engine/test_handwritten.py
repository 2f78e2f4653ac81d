"""Every pattern of SEMANTICS.md §6 on hand-written traces, expectations written by hand.

``fixtures/handwritten/traces/*.jsonl`` are Sponsio native traces (one file a
trace, one line an event, ``seq`` = line order); ``sponsio.yaml`` uses each of
the 25 patterns once. The expected violations below were worked out by reading
§4 and §6 against the files, step by step (comments give the reasoning), not by
running the audit. Both engines must report exactly these, and nothing else.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sponsio_audit.api import audit
from sponsio_audit.config import load_config

HERE = Path(__file__).resolve().parents[2] / "fixtures" / "handwritten"

# trace file -> {(contract, blamed seq, kind)}
EXPECTED: dict[str, set[tuple[str, int, str]]] = {
    # transfer at 0 before any verify; the third transfer (3) makes count 3 > 2
    "t01": {("p_precede", 0, "guarantee"), ("p_rate", 3, "guarantee")},
    # the open_ticket at 4 is never followed by close_ticket: liveness, last event blamed
    "t02": {("p_followed", 4, "liveness")},
    # rollback (1) after commit (0); delete_user (2) before confirm_delete_user (3)
    "t03": {("p_noreversal", 1, "guarantee"), ("p_confirm", 2, "guarantee")},
    # second issue_refund (5); fetch 4 times in a row (1..4) > 2 retries = 3 calls
    "t04": {("p_idem", 5, "guarantee"), ("p_retry", 4, "guarantee")},
    # send_email at 2 within 2 steps of the one at 0; the one at 5 is 3 steps after 2
    "t05": {("p_cooldown", 2, "guarantee")},
    # approve at 0 has no deploy at 1 or 2: blamed at the 2nd step after it
    "t06": {("p_deadline", 2, "guarantee")},
    # read (1) directly after lock (0); the trailing lock (5) is allowed (weak next)
    "t07": {("p_workflow", 1, "guarantee")},
    # post_public (1) after read_secrets (0); invoices by two different agents are fine
    "t08": {("p_mutex", 1, "guarantee")},
    # carol creates and approves (1); drop_table (2); carol wires without treasurer (3),
    # cfo (4) has it
    "t09": {("p_sod", 1, "guarantee"), ("p_redirect", 2, "guarantee"), ("p_perm", 3, "guarantee")},
    # rm -rf (1); url off the allowed host (3); /workspace/../etc/passwd is /etc/passwd (5)
    "t10": {
        ("p_blacklist", 1, "guarantee"),
        ("p_allowlist", 3, "guarantee"),
        ("p_scope", 5, "guarantee"),
    },
    # 4th search in a row (3) > 3; start_job (4) never followed by finish_job
    "t11": {("p_loop", 3, "guarantee"), ("p_required", 4, "liveness")},
    # SSN in the response (1); injection in the request (2); 60 + 50 = 110 > 100 tokens at
    # the second response (3); slow_api took 2000 ms > 1000 (4)
    "t12": {
        ("p_pii", 1, "guarantee"),
        ("p_inject", 2, "guarantee"),
        ("p_tokens", 3, "guarantee"),
        ("p_latency", 4, "guarantee"),
    },
    # hr wrote data (0) and messaged it to external (1)
    "t13": {("p_leak", 1, "guarantee")},
    # verify, transfer, open/close ticket: clean
    "t14": set(),
    # the restricted agent calls bash (1), not on its allowlist
    "t15": {("p_allow", 1, "guarantee")},
}


@pytest.mark.parametrize("engine", ["columnar", "reference"])
def test_every_pattern_finds_exactly_the_planted_breaks(engine):
    cfg = load_config([HERE / "sponsio.yaml"])
    res = audit([HERE / "traces"], cfg, engine=engine)
    paths = {r["file_id"]: Path(r["path"]).stem for r in res.table("files").to_pylist()}
    got: dict[str, set[tuple[str, int, str]]] = {name: set() for name in EXPECTED}
    for v in res.violations.to_pylist():
        if v["blamed"]:
            got[paths[v["file_id"]]].add((v["contract_id"], v["seq"], v["kind"]))
    assert got == EXPECTED
    # nothing unknown in these traces: every other verdict is a pass or not applicable
    counts = res.summary.verdicts
    assert counts["unverifiable"] == 0
    assert counts["violated"] == sum(len(v) for v in EXPECTED.values())
