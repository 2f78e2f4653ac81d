"""One CLI scan per hostile input, beside a good file: nothing lost, nothing crashes (issue 13).

The signal-routing cases (a metrics protobuf, a logs-first Collector file,
mixed signals per line) hold per-record routing (issue 11).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .inputs import CASES, Case, build
from .scan import check, scan_folder


def _param(case: Case) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_hostile_input(case: Case, tmp_path: Path) -> None:
    """Scan the case's folder: see ``scan.check`` for every rule checked."""
    folder = tmp_path / "traces"
    exp = build(case, folder)
    check(scan_folder(folder, tmp_path), exp)
