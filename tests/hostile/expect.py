"""What a hostile case must give (``Expect``), the case record (``Case``) and shared marks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GOOD_SOURCE = REPO / "fixtures" / "otel" / "openllmetry.jsonl"  # 1 record, 4 spans, 4 events
GOOD = "good.jsonl"
GOOD_EVENTS = 4
MARK = "<evilmark onmouseover=alert(1)>"
"""An HTML tag that must never reach a report unescaped."""
ANSI = "\x1b[31m\x1b]8;;x\x07"
"""A colour and an OSC-8 hyperlink escape that must never reach the terminal."""
RICH = "[bold red]rich[/bold red]"
"""rich console markup that must be printed as text, not interpreted."""


@dataclass(frozen=True)
class Expect:
    """What scanning a case's folder must give.

    ``skips``: (file name, record or None for any, reason fragment), all of them
    and no other skip; ``loaded``: file name → records that must have rows;
    ``either``: (file, record, fragment) loaded, or skipped with the fragment;
    ``sql``: (query, expected rows) on the store; ``no_spans``: files that must
    add no span; ``markup``: the case plants markup in reported content.
    """

    skips: tuple[tuple[str, int | None, str], ...] = ()
    loaded: dict[str, frozenset[int]] = field(default_factory=dict)
    either: tuple[tuple[str, int, str], ...] = ()
    sql: tuple[tuple[str, list[tuple[Any, ...]]], ...] = ()
    no_spans: tuple[str, ...] = ()
    markup: bool = False


@dataclass(frozen=True)
class Case:
    """One hostile input: a name, a builder writing it into a folder, and an xfail reason."""

    name: str
    build: Callable[[Path], Expect]
    xfail: str | None = None


BOMB_ZEROS = 64 << 20
"""Zeros in a test bomb: past ``ratio_floor`` (16 MiB), at a ratio of ~1000 (gzip) or more."""


def _good(d: Path) -> None:
    (d / GOOD).write_bytes(GOOD_SOURCE.read_bytes())


def _events_of(file: str) -> str:
    return (
        f"SELECT count(*) FROM events e JOIN files f USING (file_id) WHERE f.path LIKE '%/{file}'"
    )
