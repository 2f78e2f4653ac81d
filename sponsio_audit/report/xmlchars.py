"""``legal``: report text with the code points XML 1.0 and UTF-8 cannot carry replaced.

Trace content is untrusted and reaches every report (tool names, trace ids,
file paths, skip reasons). XML 1.0 forbids C0 controls other than tab, LF and
CR, lone UTF-16 surrogates and U+FFFE/U+FFFF; a lone surrogate cannot even be
written as UTF-8. Each is replaced by U+FFFD in the finished text of every XML
and JSON output (JUnit, SARIF, JSON, HTML), so a parser never rejects a report.
Escaping is the renderers' job; this only removes what no escape can carry.
"""

from __future__ import annotations

import re

_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def legal(text: str) -> str:
    """``text`` with every XML-illegal code point (see module doc) replaced by U+FFFD."""
    return _ILLEGAL.sub("\ufffd", text)
