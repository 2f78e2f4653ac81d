"""One trace as timeline rows: step, time, agent, event type, tool, redacted excerpt, marks.

Shared by ``explain`` (terminal) and the HTML report. Excerpts are built
here once, so every renderer shows the same redacted text: arguments go
through ``redact.redact_args`` (secret keys and secret-looking
values become ``<redacted>``), outputs and prompts through
``looks_secret``, then control characters are dropped and the text is
capped (``EXCERPT`` characters). Renderers still escape for their medium.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from sponsio_audit.redact import REDACTED, clean, looks_secret, redact_args

EXCERPT = 160


def excerpt(text: str | None, limit: int = EXCERPT) -> str:
    """``text`` with secrets redacted, control characters removed, cut to ``limit``."""
    if text is None:
        return ""
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        value = None
    if isinstance(value, (dict, list)):
        shown = json.dumps(redact_args(value), ensure_ascii=False, separators=(",", ":"))
    else:
        shown = REDACTED if looks_secret(text) else text
    return clean(shown, limit)


def when(start_ns: int | None) -> str:
    """An event's start as ``HH:MM:SS.mmm`` UTC ("" when not recorded)."""
    if start_ns is None:
        return ""
    t = datetime.fromtimestamp(start_ns / 1e9, tz=timezone.utc)
    return t.strftime("%H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def rows(events: list[dict[str, Any]], violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Timeline rows of one trace's events, each marked ``blamed``/``offending``/``opened``.

    ``marks`` lists the contract ids that blame the event, that count it as
    offending, or whose liveness obligation it opened.
    """
    blamed: dict[int, set[str]] = {}
    offending: dict[int, set[str]] = {}
    opened: dict[int, set[str]] = {}
    for v in violations:
        if v["seq"] is not None:
            (blamed if v["blamed"] else offending).setdefault(v["seq"], set()).add(v["contract_id"])
        if v.get("kind") == "liveness" and v.get("opened_seq") is not None:
            opened.setdefault(v["opened_seq"], set()).add(v["contract_id"])
    out = []
    for e in events:
        seq = e["seq"]
        detail = e["args"] if e["type"] == "tool_call" else (e["content"] or e["prompt"])
        out.append(
            {
                "step": seq,
                "time": when(e["start_ns"]),
                "agent": clean(e["agent"] or ""),
                "type": clean(e["type"]),
                "tool": clean(e["tool"] or ""),
                "excerpt": excerpt(detail),
                "span_id": e.get("span_id") or "",
                "blamed": sorted(blamed.get(seq, ())),
                "offending": sorted(offending.get(seq, ())),
                "opened": sorted(opened.get(seq, ())),
            }
        )
    return out
