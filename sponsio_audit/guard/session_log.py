"""The guard's session log: one JSONL file per session, one line per (decision × contract).

Location: ``$SPONSIO_SESSIONS_DIR/<agent>/<UTC timestamp>.jsonl``, else
``~/.sponsio/sessions/<agent>/<UTC timestamp>.jsonl``; ``SPONSIO_SESSION_LOG=0``
turns it off (an explicit path given to the guard still writes). The agent
id is reduced to one safe path segment (``safe_segment``).

Line fields (what ``sponsio_audit.ingest.session_log`` reads back):

- ``ts``: ISO-8601 UTC with microseconds, unique and increasing within a
  session; every line of one tool call has the same ``ts`` and ``action``,
  which is how a reader groups lines into one tool call.
- ``agent_id``, ``action`` (the tool name), ``args`` (redacted JSON object,
  not truncated so that an audit can re-check argument atoms),
  ``event_type`` (``tool_call``), ``conversation_id`` when known.
- ``contract_id`` and ``constraint`` (the violated guarantees' text, or all
  of the contract's guarantees when it passed); both null on the single line
  written for a call that no contract checks.
- ``result``: allowed, blocked, escalated, warned, redirected or observed:
  this contract's outcome. ``blocked`` and ``redirected`` mean the call did
  not run (its event is not part of the trace, SEMANTICS.md §4.2).
- ``message``, ``seq`` (the call's number in the session, blocked calls
  included), ``position`` (its position in the guard's trace), ``mode``,
  and for a violation ``kind``, ``severity``, ``strategy``, ``redirected_to``.

A post-hoc output check (``guard_after``) and a liveness violation at the
session end (``finish``) add lines with the ``ts`` and ``action`` of the
call they concern, so they join that call's group.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from sponsio_audit.guard.strategies import Decision, line_result

_UNSAFE = re.compile(r"[^A-Za-z0-9._\-]+")


def safe_segment(name: str, limit: int = 100) -> str:
    """``name`` as one safe path segment: no separators, ``..``, NUL or control characters."""
    s = _UNSAFE.sub("_", name).strip("._") or "_"
    return s[:limit]


def iso_utc(ns: int) -> str:
    """``ns`` (Unix nanoseconds) as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``."""
    d = datetime.fromtimestamp(ns // 1000 / 1e6, tz=timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def enabled_by_env() -> bool:
    """False when ``SPONSIO_SESSION_LOG`` is 0/false/off/no."""
    v = os.environ.get("SPONSIO_SESSION_LOG", "1").strip().lower()
    return v not in ("0", "false", "off", "no")


def sessions_dir() -> Path:
    """``$SPONSIO_SESSIONS_DIR`` or ``~/.sponsio/sessions``."""
    env = os.environ.get("SPONSIO_SESSIONS_DIR")
    return Path(env) if env else Path.home() / ".sponsio" / "sessions"


class SessionLog:
    """Appends decision lines to one session file, created on first write.

    ``path`` is the file to write; ``None`` picks a new file under
    ``root/<agent>/`` (``root`` defaults to ``sessions_dir()``).
    """

    def __init__(self, agent_id: str, path: str | Path | None = None, root: Path | None = None):
        self.agent_id = agent_id
        self._path = Path(path) if path is not None else None
        self._root = root
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self.lines = 0

    @property
    def path(self) -> Path | None:
        """The file written (None before the first line when it is chosen automatically)."""
        return self._path

    def _open(self) -> IO[str]:
        if self._path is not None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            return open(self._path, "a", encoding="utf-8")
        folder = (self._root or sessions_dir()) / safe_segment(self.agent_id)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%S.%fZ")
        for n in range(1000):
            p = folder / (f"{stamp}.jsonl" if n == 0 else f"{stamp}-{n}.jsonl")
            try:
                f = open(p, "x", encoding="utf-8")  # noqa: SIM115 - kept open
            except FileExistsError:
                continue
            self._path = p
            return f
        raise OSError(f"cannot create a session file in {folder}")

    def write(
        self,
        decision: Decision,
        constraints: Mapping[str, Sequence[str]],
        only: Sequence[str] | None = None,
        tool: str | None = None,
        conversation_id: str | None = None,
    ) -> None:
        """Write the lines of ``decision``: one per contract checked (or per ``only``)."""
        ids: Sequence[str | None] = list(only if only is not None else decision.checked) or [None]
        base: dict[str, Any] = {
            "ts": decision.ts,
            "agent_id": self.agent_id,
            "action": tool if tool is not None else decision.tool,
            "args": decision.args,
            "event_type": "tool_call",
        }
        if conversation_id is not None:
            base["conversation_id"] = conversation_id
        out = []
        for cid in ids:
            result, message = line_result(decision, cid)
            if cid is None:
                result = "allowed" if decision.appended else decision.action
            mine = [v for v in decision.violations if v.contract_id == cid]
            texts = [v.guarantee for v in mine] or list(constraints.get(cid or "", ()))
            line = {
                **base,
                "constraint": "; ".join(texts) if cid is not None else None,
                "contract_id": cid,
                "result": result,
                "message": message,
                "seq": decision.seq,
                "position": decision.position,
                "mode": decision.mode,
            }
            if mine:
                v = mine[0]
                line.update(kind=v.kind, severity=v.severity, strategy=v.strategy)
            if decision.redirected_to is not None:
                line["redirected_to"] = decision.redirected_to
            out.append(json.dumps(line, ensure_ascii=False, default=str))
        with self._lock:
            if self._file is None:
                self._file = self._open()
            self._file.write("\n".join(out) + "\n")
            self._file.flush()
            self.lines += len(out)

    def close(self) -> None:
        """Close the file (a later write reopens it in append mode)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
