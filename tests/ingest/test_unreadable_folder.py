"""A folder the scan cannot list is listed as not read, never left out without a word.

``os.walk`` skips a folder it cannot list (no permission) silently: its traces were
never audited and the scan said nothing, ``--strict`` included. It is now one skipped
input naming the folder and the reason, so the totals say something was not read.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from sponsio_audit.ingest import Store, ingest
from tests.ingest.conftest import rows

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo" / "traces"


def test_a_folder_that_cannot_be_listed_is_a_skipped_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(DEMO / "support_bot.otlp.jsonl", tmp_path / "a.jsonl")
    (tmp_path / "sub").mkdir()
    shutil.copy(DEMO / "workflow.otlp.jsonl", tmp_path / "sub" / "b.jsonl")
    locked = str(tmp_path / "sub")
    scandir = os.scandir

    def denied(path: Any = ".") -> Any:  # as chmod 000 does for a user other than root
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", locked)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", denied)
    store = Store.open(None)
    summary = ingest([tmp_path], store)
    assert summary.files == 2 and summary.skipped == 1
    skipped = rows(store, "SELECT f.path, s.reason FROM skipped s JOIN files f USING (file_id)")
    why = "cannot read folder: Permission denied; not read"
    assert skipped == [{"path": locked, "reason": why}]
