"""The driver's plan of a Spark ingest: files, duplicates and line-aligned byte ranges.

The driver walks the paths as ``ingest.pipeline`` does, hashes each file
once (a file whose sha256 came before is counted as a duplicate and not
read), numbers the files, sniffs their format, lists the files skipped
whole (empty, unrecognised, logs, metrics, unreadable) and cuts
uncompressed OTLP JSON Lines files into ranges of about ``RANGE_BYTES`` that
end at a line end, counting the lines before each range so that record
numbers stay the file's line numbers, and noting each range's CRC-32 (a task checks
that the bytes it reads are those hashed: ``Unit.crc``, ``tasks._checked``).
Everything else is one unit a file.
Standard input (``-``) is read from a copy the caller made (``stdin``) and
listed as ``-``, as ``ingest.pipeline`` lists it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from sponsio_audit.ingest.files import (
    duplicate_reason,
    file_hash,
    irregular,
    otlp_decoder,
    prefix,
    walk,
)
from sponsio_audit.ingest.layers import decompressed
from sponsio_audit.ingest.limits import stream_failure
from sponsio_audit.ingest.line_ranges import ident
from sponsio_audit.ingest.sniff import NOT_TRACES, sniff

RANGE_BYTES = 16 << 20
"""Bytes of an OTLP JSON Lines file read by one task (cut at the next line end)."""

RUN = 1
"""The ``span_facts.run`` of every fact (one ingest run)."""


@dataclass(frozen=True)
class Unit:
    """What one task reads: a whole file (``end`` -1) or a byte range of a JSON Lines file."""

    file_id: int
    path: str
    fmt: str
    layout: str
    sha: str
    start: int = 0
    end: int = -1
    first: int = 1  # record (line) number of the range's first line
    name: str = ""  # the path listed in ``files`` when it is not ``path`` (``-``: stdin)
    size: int = 0
    """Bytes of the file when the driver hashed it: a whole file is read that far (a live
    log grows meanwhile, or shrinks: ``ingest.files.prefix``), as the local ingest reads it."""
    crc: int = 0
    """The CRC-32 of a range's bytes when the driver hashed them (a whole file has ``sha``):
    a task reads only the bytes the driver hashed (``ingest.files.unchanged``)."""

    @property
    def listed(self) -> str:
        """The path the ``files`` table lists."""
        return self.name or self.path


@dataclass(frozen=True)
class Plan:
    """The driver's plan: units for the executors, rows of files read no further, duplicates."""

    units: list[Unit] = field(default_factory=list)
    files: list[tuple[Any, ...]] = field(default_factory=list)
    skipped: list[tuple[int, int, str]] = field(default_factory=list)
    duplicates: int = 0


def plan(paths: list[str], range_bytes: int = RANGE_BYTES, stdin: Sequence[str] = ()) -> Plan:
    """Units, whole-file rows and duplicates of the files under ``paths`` (module doc);
    ``stdin``: the files holding standard input, one per ``-`` in ``paths``."""
    out = Plan()
    shas: dict[str, str] = {}  # sha256 -> path of the first file
    duplicates = 0
    file_id = 0
    copies = iter(stdin)
    for name in walk(list(paths)):
        path = name
        if name == "-":
            path = next(copies, "")
            if not path:
                raise ValueError("-: standard input was not copied for this plan")
        why = irregular(path)  # a FIFO or device would block: listed, never opened
        if why is not None:
            file_id += 1
            out.skipped.append((file_id, 0, why))
            out.files.append((file_id, name, "not_regular", None, None, 1, 1))
            continue
        try:  # a range starts after the first line end at or past each ``range_bytes``
            same = ident(os.stat(path))  # the driver's reads below check it (its own host)
            sha, size, index = file_hash(path, same, every=range_bytes + 1, digests=True)
        except OSError as e:
            file_id += 1
            out.skipped.append((file_id, 0, f"cannot read file: {e.strerror or e}"))
            out.files.append((file_id, name, "unreadable", None, None, 1, 1))
            continue
        file_id += 1
        if sha in shas and size:  # listed, not read again (as ingest.pipeline does)
            duplicates += 1
            out.skipped.append((file_id, 0, duplicate_reason(shas[sha])))
            out.files.append((file_id, name, "duplicate", size, sha, 1, 1))
            continue
        shas[sha] = name
        listed = "" if name == path else name

        def open_(p: str = path, n: int = size, same: tuple[int, int] = same) -> IO[bytes]:
            return decompressed(prefix(p, n, same))[0]

        try:
            fmt, layout = sniff(open_)
            with prefix(path, size, same) as raw:
                layers = decompressed(raw)[1]
        except Exception as e:  # a stream that breaks while sniffing: its record 1
            out.skipped.append((file_id, 1, stream_failure(e)))
            out.files.append((file_id, name, "unknown", size, sha, 1, 1))
            continue
        if fmt in NOT_TRACES:
            out.skipped.append((file_id, 0, NOT_TRACES[fmt]))
            out.files.append((file_id, name, fmt, size, sha, 1, 1))
        elif otlp_decoder(fmt) == "otlp_json" and layout == "lines" and not layers:
            for (start, length, first), crc in zip(index.ranges(), index.digests(), strict=True):
                end = start + length
                unit = Unit(file_id, path, fmt, layout, sha, start, end, first, listed, size, crc)
                out.units.append(unit)
        else:
            out.units.append(Unit(file_id, path, fmt, layout, sha, name=listed, size=size))
    return Plan(out.units, out.files, out.skipped, duplicates)
