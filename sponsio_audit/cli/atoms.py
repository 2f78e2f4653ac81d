"""``sponsio-audit atoms``: the atom vocabulary that ltl formulas may use."""

from __future__ import annotations

from typing import Any

from sponsio_audit.cli import listing
from sponsio_audit.cli.common import ListFormat, ListFormatOpt


def atoms(fmt: ListFormatOpt = ListFormat.table) -> None:
    """List the atom registry (what ltl formulas may use).

    Example: sponsio-audit atoms | grep arg_field_has
    """
    from sponsio_audit.atoms import registry

    records: list[dict[str, Any]] = []
    for spec in registry.ATOMS:
        records.append(
            {
                "atom": spec.name,
                "aliases": list(spec.aliases),
                "args": [f"{p.name}: {p.kind}" for p in spec.params],
                "variadic": spec.variadic,
                "type": spec.value,
                "from": sorted(spec.sources) or ["config"],
                "description": spec.description,
                "unknown_when": spec.unknown,
            }
        )
    rows = [
        (
            r["atom"] + (f" ({', '.join(r['aliases'])})" if r["aliases"] else ""),
            ", ".join(r["args"]) + ("…" if r["variadic"] else ""),
            r["type"],
            ", ".join(r["from"]),
            r["description"],
            r["unknown_when"],
        )
        for r in records
    ]
    columns = ("atom", "args", "type", "from", "description", "unknown when")
    listing.show("atoms", columns, rows, fmt=fmt.value, records=records)
