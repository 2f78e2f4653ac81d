"""``sponsio-audit conventions``: how spans become events, from the one table ingest reads.

The rows are ``ingest.convention_table.CONVENTIONS`` in precedence order (CONVENTIONS.md,
"Span → event"): the first row that applies wins, per field, and a field it did
not record comes from the next row of the same role.
"""

from __future__ import annotations

from typing import Any

from sponsio_audit.cli import listing
from sponsio_audit.cli.common import ListFormat, ListFormatOpt


def conventions(fmt: ListFormatOpt = ListFormat.table) -> None:
    """List the trace conventions read, in precedence order.

    Each row: when a span is a tool, LLM or agent span under a convention, and
    where each of its fields comes from (attribute keys, first one wins).

    Example: sponsio-audit conventions | grep openinference
    """
    from sponsio_audit.ingest.convention_table import (
        AGENT,
        CONVENTIONS,
        CONVERSATION,
        source_text,
        when_text,
    )

    every = {
        "convention": "*",
        "role": "",
        "when": ["every span"],
        "fields": [
            f"conversation <- {' > '.join(CONVERSATION)} (first recorded)",
            f"agent <- {AGENT} when no row applies",
        ],
        "agent_scope": False,
        "description": "what every span records, whatever its convention",
    }
    records: list[dict[str, Any]] = [every] + [
        {
            "convention": row.name,
            "role": row.role,
            "when": [when_text(w) for w in row.when],
            "fields": [source_text(s) for s in row.fields],
            "agent_scope": row.scope,
            "description": row.doc,
        }
        for row in CONVENTIONS
    ]
    rows = [
        (
            r["convention"],
            r["role"],
            " | ".join(r["when"]),
            "; ".join(r["fields"]),
            r["description"],
        )
        for r in records
    ]
    columns = ("convention", "role", "recognised by", "fields (precedence order)", "description")
    listing.show("conventions", columns, rows, fmt=fmt.value, records=records)
