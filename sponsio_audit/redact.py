"""Redaction and truncation of tool arguments (privacy defaults of the span schema).

``redact_args`` replaces the value of every key matching ``SECRET_KEY``
(Sponsio's ``password|token|secret|key|auth``, plus ``passwd``, ``pwd``,
``passphrase``, ``credential`` and ``cookie``: more is redacted than in
Sponsio, never less; case-insensitive, at any depth of dicts and lists) by
``<redacted>``, and any string value that ``looks_secret`` too, whatever its
key: AWS access keys, ``sk-…``/Stripe API keys, GitHub, GitLab and Slack
tokens, bearer tokens (any case), JWTs, PEM private-key headers, passwords
in URLs (``scheme://user:pass@``), and a secret key assigned inside text
(``"password": …``, ``api_key=…``: arguments that are not a JSON object, a
Python repr, JSON cut short). Key names stay visible. The report code reuses
both functions, so one definition of "secret" covers the session log,
exported spans and reports.

``inert`` puts untrusted text on one line without control, bidi or invisible
characters (every line the CLI prints on stderr goes through it); ``clean``
does the same and cuts it to a length for a sentence. ``truncate`` caps a text at a byte budget
and says how much was cut (``(+1.2 KB truncated)``), never splitting a
UTF-8 character.
"""

from __future__ import annotations

import json
import re
from typing import Any

import re2

REDACTED = "<redacted>"

_RE2 = re2.Options()
_RE2.log_errors = False

SECRET_KEY = re2.compile(
    "(?i)password|passwd|passphrase|pwd|token|secret|key|auth|credential|cookie", _RE2
)
"""Keys whose values are never exported."""

_SECRET_SHAPES = (
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key id
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style API keys
    r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe keys
    r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}",  # GitHub tokens
    r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab tokens
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack tokens
    r"\b(?i:bearer)\s+[A-Za-z0-9._~+/\-]{16,}",  # bearer tokens (the scheme in any case)
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.",  # JSON web tokens
    r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----",  # PEM private keys
    r"[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@",  # a password in a URL
    r"(?i:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|private[_\-]?key"
    r"|access[_\-]?key|auth(?:orization)?|credentials?|cookie)"
    r"[\"']?\s*[:=]\s*[\"']?[^\s\"',}]",  # a secret key assigned inside text
)
_SECRET_VALUE = re2.compile("|".join(_SECRET_SHAPES), _RE2)
"""Values shaped like a credential (RE2: linear time on untrusted text of any length)."""


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


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
"""C0 and C1 controls, zero-width and bidi marks and overrides (U+061C, U+200E/F,
U+202A–E, U+2066–9), invisible operators and deprecated format characters (U+2060–206F),
the BOM / zero-width no-break space."""

_BREAKS = re.compile(r"[\t\n\r\v\f\u2028\u2029]+")


def inert(text: object) -> str:
    """``text`` on one line (line breaks and tabs as one space) without control, bidi or
    invisible characters: what untrusted text may show on a terminal or in a sentence."""
    return _CONTROL.sub("", _BREAKS.sub(" ", str(text)))


def clean(text: object, limit: int = 80) -> str:
    """``inert(text)`` cut to ``limit`` characters with an ellipsis."""
    s = inert(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"
