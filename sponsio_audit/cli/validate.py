"""``sponsio-audit validate``: load sponsio.yaml files; every error (exit 2) or what they hold."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from sponsio_audit.cli import listing
from sponsio_audit.cli.common import (
    EXIT_USAGE,
    ListFormat,
    ListFormatOpt,
    UsageProblem,
    checked_limits,
    say_error,
)


def _strategy(c: Any) -> str:
    return c.strategy.kind + (f" → {c.strategy.safe_tool}" if c.strategy.safe_tool else "")


def _texts(c: Any) -> list[str]:
    texts = [g.text + (" (skipped)" if g.skipped else "") for g in c.guarantees]
    if c.assumptions:
        texts.insert(0, "assume " + " & ".join(a.text for a in c.assumptions))
    return texts


def validate(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="sponsio.yaml files to check; default: the one discovery finds."),
    ] = None,
    fmt: ListFormatOpt = ListFormat.table,
) -> None:
    """Load configuration files; print every error (exit 2) or what they hold (exit 0).

    Example: sponsio-audit validate sponsio.yaml
    """
    from sponsio_audit.config import ConfigError, discover, load_config

    if not files:
        try:
            found = discover(Path.cwd())
        except ConfigError as e:
            for issue in e.errors:
                sys.stderr.write(listing.cell(issue) + "\n")
            raise typer.Exit(EXIT_USAGE) from None
        if not found.files:
            where = ", ".join(str(d) for d in found.searched)
            sys.stderr.write(f"error: no sponsio.yaml, .sponsio.yaml or pyproject.toml "
                             f"[tool.sponsio-audit] contracts in {where}\n")  # fmt: skip
            raise typer.Exit(EXIT_USAGE)
        files = list(found.files)
    try:
        cfg = load_config(files)
    except ConfigError as e:
        if fmt == ListFormat.json:
            errors = {"errors": [str(issue) for issue in e.errors]}
            sys.stdout.write(json.dumps(errors, indent=2, ensure_ascii=False) + "\n")
        for issue in e.errors:
            sys.stderr.write(listing.cell(issue) + "\n")
        sys.stderr.write(f"{len(e.errors)} error(s)\n")
        raise typer.Exit(EXIT_USAGE) from None
    try:
        checked_limits(cfg.limits)  # as scan checks them: the same error naming the YAML path
    except UsageProblem as e:
        if fmt == ListFormat.json:
            sys.stdout.write(json.dumps({"errors": e.lines}, indent=2, ensure_ascii=False) + "\n")
        for line in e.lines:
            say_error(line)
        raise typer.Exit(EXIT_USAGE) from None
    records = [
        {
            "id": c.id,
            "agent": c.agent,
            "severity": c.severity,
            "strategy": _strategy(c),
            "guarantees": _texts(c),
        }
        for c in cfg.contracts
    ]
    if fmt == ListFormat.json:
        doc: dict[str, Any] = {
            "files": [str(f) for f in cfg.files],
            "agents": {
                a.id: {"permissions": list(a.permissions), "includes": list(a.includes)}
                for a in cfg.agents.values()
            },
            "contracts": records,
            "skipped": [{"contract": cid, "reason": r} for cid, r in cfg.skipped],
            "ignored": list(cfg.ignored),
        }
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return
    out = sys.stdout.write
    cell = listing.cell
    out(f"{len(cfg.files)} file(s), {len(cfg.agents)} agent(s), {len(cfg.contracts)} contract(s)\n")
    for a in cfg.agents.values():
        perms = ", ".join(a.permissions) or "-"
        incl = ", ".join(a.includes) or "-"
        out(f"  agent {cell(a.id)}: permissions {cell(perms)}; includes {cell(incl)}\n")
    rows = [
        (r["id"], r["agent"], r["severity"], r["strategy"], " | ".join(r["guarantees"]))
        for r in records
    ]
    listing.show("contracts", ("id", "agent", "severity", "strategy", "guarantees"), rows)
    if cfg.skipped:
        out(f"skipped clauses ({len(cfg.skipped)}), never counted as a pass:\n")
        for cid, reason in cfg.skipped:
            out(f"  {cell(cid)}: {cell(reason)}\n")
    if cfg.ignored:
        keys = Counter(entry.rsplit(".", 1)[-1].rsplit(": ", 1)[-1] for entry in cfg.ignored)
        shown = ", ".join(f"{k} ({n}×)" for k, n in sorted(keys.items()))
        out(f"ignored keys (not used by the audit): {cell(shown)}\n")
        for entry in cfg.ignored:
            out(f"  {cell(entry)}\n")
