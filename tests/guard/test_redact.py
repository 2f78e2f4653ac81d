"""Redaction, secret-looking values and truncation markers."""

from __future__ import annotations

from sponsio_audit.guard.session_log import safe_segment
from sponsio_audit.redact import args_json, looks_secret, redact_args, truncate


def test_redact_keys_nested() -> None:
    obj = {
        "Password": "p",
        "user": "u",
        "nested": {"AUTH_header": "x", "list": [{"refresh_token": 1}, "plain"]},
        "apiKey": {"deep": "v"},
    }
    assert redact_args(obj) == {
        "Password": "<redacted>",
        "user": "u",
        "nested": {"AUTH_header": "<redacted>", "list": [{"refresh_token": "<redacted>"}, "plain"]},
        "apiKey": "<redacted>",
    }
    assert obj["Password"] == "p"  # the input is not changed
    assert redact_args(None) is None


def test_looks_secret() -> None:
    for s in [
        "AKIAIOSFODNN7EXAMPLE",
        "use sk-proj-abcdefghijklmnop1234",
        "ghp_0123456789abcdefghijABCDEFGHIJ",
        "Authorization: Bearer abcdefghijklmnop.qrstu",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----",
    ]:
        assert looks_secret(s), s
    for s in ["hello", "sk-short", "AKIA", "ghp_x", "bearer of news"]:
        assert not looks_secret(s), s
    assert redact_args({"cmd": "export AWS=AKIAIOSFODNN7EXAMPLE"}) == {"cmd": "<redacted>"}


def test_truncate_marks_what_was_cut() -> None:
    assert truncate("abc", 10) == "abc"
    t = truncate("x" * (4096 + 1229), 4096)
    assert t == "x" * 4096 + " (+1.2 KB truncated)"
    assert truncate("é" * 10, 5).startswith("éé ")  # never splits a character
    assert args_json({"a": "y" * 5000}, limit=4096).endswith("(+912 B truncated)")


def test_safe_segment() -> None:
    assert safe_segment("support_bot") == "support_bot"
    for bad in ["..", ".", "", "/", "a/../b", "x\x00y", "../../etc/passwd", "C:\\win"]:
        s = safe_segment(bad)
        assert s and "/" not in s and "\\" not in s and "\x00" not in s and s not in (".", "..")


def test_secrets_in_other_shapes_are_redacted() -> None:
    """Credentials a report excerpt could show: other token formats, a password in a URL,
    and a secret key assigned inside text that is not a JSON object (a Python repr, JSON
    with a trailing comma or cut short), which reaches the report as ``{"input": text}``."""
    for s in [
        "curl -H 'authorization: bearer abcdefghijklmnopqrstuvwxyz0123' https://api",
        "sk_live_51Habcdefghijklmnopqrstuvwx",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        "glpat-abcdefghij1234567890",
        "postgres://admin:Hunter2dsn@db:5432/prod",
        "{'user': 'admin', 'password': 'Hunter2repr'}",
        '{"user": "admin", "password": "Hunter2comma",}',
        '{"api_key": "PlainApiKey123", "content": "xxxxxxxx (+1.0 MB truncated)',
        "export API_KEY=abc123",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    ]:
        assert looks_secret(s), s
        assert redact_args({"input": s}) == {"input": "<redacted>"}
    for s in ["max_tokens=100", "author: Bob", "tokens: 5", "http://host:8080/a:b@c", "x" * 5000]:
        assert not looks_secret(s), s
    assert redact_args({"passwd": 1, "pwd": 2, "passphrase": 3, "credentials": 4, "cwd": 5}) == {
        "passwd": "<redacted>", "pwd": "<redacted>", "passphrase": "<redacted>",
        "credentials": "<redacted>", "cwd": 5,
    }  # fmt: skip


def test_inert_text_has_no_control_bidi_or_invisible_characters() -> None:
    from sponsio_audit.redact import clean, inert

    hostile = "a\x1b[2J\u202eb\u2066c\u061cd\ufeffe\u2060f\u200bg\u2028h\ti\x85j"
    assert inert(hostile) == "a[2Jbcdefg h ij"
    assert clean(hostile, 8) == "a[2Jbcd…"
