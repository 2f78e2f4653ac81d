"""``sponsio-audit limits``: every ingest limit with its default and reason, from the registry.

The list is ``ingest.limits.Limits.describe()``, the one place the limits are
declared; ``--in-force`` shows the values a scan here would use (the
``limits:`` of the contract files found, ``$SPONSIO_AUDIT_INGEST_LIMITS``).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from sponsio_audit.cli.common import (
    ContractsOpt,
    IngestLimitOpt,
    ListFormat,
    ListFormatOpt,
    guarded,
    limits_in_force,
)


def limits(
    in_force: Annotated[
        bool,
        typer.Option(
            "--in-force", help="Show the values a scan would use here (files, variable, flags)."
        ),
    ] = False,
    contracts: ContractsOpt = None,
    ingest_limit: IngestLimitOpt = None,
    fmt: ListFormatOpt = ListFormat.table,
) -> None:
    """List the ingest limits: name, value, what a record or file over it loses.

    Example: sponsio-audit scan traces/ --ingest-limit record_bytes=512MiB
    """
    from sponsio_audit.ingest.limits import DEFAULT, shown

    with guarded():
        current = DEFAULT
        if in_force or contracts or ingest_limit:
            settings: list[tuple[str, object, str]] = []
            if in_force or contracts:
                from sponsio_audit.cli import contracts as contract_sources

                cfg, _ = contract_sources.load(list(contracts or []), [])
                settings = cfg.limits
            current = limits_in_force(settings, ingest_limit or [])
        rows = [
            (name, value, DEFAULT.describe()[i][1], doc)
            for i, (name, value, doc) in enumerate(current.describe())
        ]
        if fmt == ListFormat.json:
            out = [{"name": n, "value": v, "default": d, "reason": r} for n, v, d, r in rows]
            sys.stdout.write(json.dumps(out, indent=2) + "\n")
            return
        width = max(len(n) for n, *_ in rows)
        for name, value, default, doc in rows:
            note = "" if value == default else f" (default {shown(default)})"
            sys.stdout.write(f"{name:<{width}}  {shown(value):>8}  {doc}{note}\n")
