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
