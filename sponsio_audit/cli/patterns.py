"""``sponsio-audit patterns``: the pattern library, or with ``--packs`` the shipped packs."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from sponsio_audit.cli import listing
from sponsio_audit.cli.common import ListFormat, ListFormatOpt


def patterns(
    packs: Annotated[bool, typer.Option("--packs", help="List the shipped packs instead.")] = False,
    fmt: ListFormatOpt = ListFormat.table,
) -> None:
    """List the pattern library (or, with --packs, the shipped contract packs).

    Example: sponsio-audit patterns | grep must_precede
    """
    if packs:
        _packs(fmt.value)
        return
    from sponsio_audit.ltl.patterns import registry

    records: list[dict[str, Any]] = []
    for spec in registry().values():
        records.append(
            {
                "pattern": spec.name,
                "args": [p.show() for p in spec.params] if not spec.judge else None,
                "liveness": spec.liveness,
                "strategy": "skipped (LLM judge)" if spec.judge else spec.strategy,
                "description": spec.description,
            }
        )
    rows = [
        (
            r["pattern"],
            ", ".join(r["args"]) if r["args"] is not None else "…",
            "yes" if r["liveness"] else "",
            r["strategy"],
            r["description"],
        )
        for r in records
    ]
    columns = ("pattern", "args", "liveness", "strategy", "description")
    listing.show("patterns", columns, rows, fmt=fmt.value, records=records)


def _packs(fmt: str) -> None:
    from sponsio_audit.config import ConfigError, load_config, shipped_packs

    records = []
    for name, path in shipped_packs():
        try:
            cfg = load_config(path)
            counts: dict[str, object] = {
                "contracts": len(cfg.contracts),
                "skipped": len(cfg.skipped),
            }
        except ConfigError as e:
            counts = {"contracts": None, "skipped": None, "errors": len(e.errors)}
        records.append({"pack": name, **counts, "file": path.name})
    rows = [
        (
            r["pack"],
            "error" if r["contracts"] is None else r["contracts"],
            r.get("errors", r["skipped"]),
            r["file"],
        )
        for r in records
    ]
    listing.show("shipped packs", ("pack", "contracts", "skipped", "file"), rows, fmt=fmt,
                 records=records)  # fmt: skip
