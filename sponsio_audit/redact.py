"""Redaction and truncation of tool arguments (privacy defaults of the span schema).

``redact_args`` replaces the value of every key matching
``password|token|secret|key|auth`` (case-insensitive, at any depth of dicts
and lists) by ``<redacted>``, and any string value that ``looks_secret``
(AWS access keys, ``sk-…`` API keys, GitHub tokens, bearer tokens, PEM
private-key headers) too, whatever its key. Key names stay visible. The
report code reuses both functions, so one definition of "secret" covers
the session log, exported spans and reports.

``clean`` drops control and bidi characters from untrusted text shown in a
sentence and cuts it to a length. ``truncate`` caps a text at a byte budget
and says how much was cut (``(+1.2 KB truncated)``), never splitting a
UTF-8 character.
"""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = "<redacted>"

SECRET_KEY = re.compile(r"password|token|secret|key|auth", re.IGNORECASE)
"""Keys whose values are never exported."""

_SECRET_VALUE = re.compile(
    r"""
    \b(?:AKIA|ASIA)[0-9A-Z]{16}\b                 # AWS access key id
  | \bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}       # OpenAI / Anthropic style API keys
  | \b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}  # GitHub tokens
  | \bxox[abprs]-[A-Za-z0-9\-]{10,}               # Slack tokens
  | \bBearer\s+[A-Za-z0-9._~+/\-]{16,}=*          # bearer tokens
  | -----BEGIN\ (?:[A-Z]+\ )*PRIVATE\ KEY-----    # PEM private keys
    """,
    re.VERBOSE,
)


def looks_secret(value: str) -> bool:
    """True when ``value`` contains something shaped like a credential."""
    return bool(_SECRET_VALUE.search(value))


def redact_args(obj: Any) -> Any:
    """A copy of ``obj`` with secret values replaced by ``<redacted>`` (see module doc)."""
    if isinstance(obj, dict):
        return {
            k: REDACTED if isinstance(k, str) and SECRET_KEY.search(k) else redact_args(v)
            for k, v in obj.items()
        }
    if isinstance(obj, (list, tuple)):
        return [redact_args(v) for v in obj]
    if isinstance(obj, str) and looks_secret(obj):
        return REDACTED
    return obj


def human_size(n: int) -> str:
    """``n`` bytes as ``512 B``, ``1.2 KB`` or ``3.4 MB``."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, marked ``(+N KB truncated)`` when cut."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    kept = raw[:limit].decode("utf-8", errors="ignore")
    cut = len(raw) - len(kept.encode("utf-8"))
    return f"{kept} (+{human_size(cut)} truncated)"


def args_json(args: Any, *, redact: bool = True, limit: int | None = None) -> str:
    """Compact JSON text of tool args for export: redacted, then truncated at ``limit`` bytes."""
    if redact:
        args = redact_args(args)
    text = json.dumps(args, separators=(",", ":"), ensure_ascii=False, default=str)
    return truncate(text, limit) if limit is not None else text


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


_BREAKS = re.compile(r"[\t\n\r\v\f\u2028\u2029]+")


def clean(text: object, limit: int = 80) -> str:
    """``text`` on one line (line breaks and tabs as one space) without control/bidi
    characters, cut to ``limit`` characters with an ellipsis."""
    s = _CONTROL.sub("", _BREAKS.sub(" ", str(text)))
    return s if len(s) <= limit else s[: limit - 1] + "…"
