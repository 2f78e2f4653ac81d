"""The differential suite's pair count, printed at the end of the run."""

from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    import sys

    oracle = sys.modules.get("tests.sponsio.oracle")
    pairs = getattr(oracle, "PAIRS", None)
    if not pairs:
        return
    detail = ", ".join(f"{k} {n}" for k, n in sorted(pairs.items()))
    terminalreporter.write_line(
        f"sponsio differential: {sum(pairs.values())} (trace, contract) pairs compared "
        f"with Sponsio 0.2.0a21 ({detail})"
    )
