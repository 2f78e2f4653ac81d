"""The ``sponsio-audit`` command line: one thin function per command.

Commands parse options, call the library and render with rich. Text that
comes from YAML files is user data: it is printed through ``rich.text.Text``
or ``rich.markup.escape``, never as markup.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sponsio_audit.atoms import registry as atom_registry
from sponsio_audit.cli_audit import explain, report, scan
from sponsio_audit.config import Config, ConfigError, load_config, shipped_packs
from sponsio_audit.ltl.patterns import registry as pattern_registry

app = typer.Typer(
    name="sponsio-audit",
    help="Audit what LLM agents did against temporal-logic contracts.",
    no_args_is_help=True,
    add_completion=False,
)

EXIT_CONFIG = 2


def _console() -> Console:
    return Console(soft_wrap=True, highlight=False)


@app.command()
def patterns(
    packs: bool = typer.Option(False, "--packs", help="List the shipped packs instead."),
) -> None:
    """List the pattern library (or, with --packs, the shipped contract packs)."""
    console = _console()
    if packs:
        table = Table("pack", "contracts", "skipped", "file", title="shipped packs")
        for name, path in shipped_packs():
            try:
                cfg = load_config(path)
                counts = (str(len(cfg.contracts)), str(len(cfg.skipped)))
            except ConfigError as e:
                counts = ("error", str(len(e.errors)))
            table.add_row(escape(name), *counts, escape(path.name))
        console.print(table)
        return
    table = Table("pattern", "args", "liveness", "strategy", "description", title="patterns")
    for spec in pattern_registry().values():
        args = ", ".join(p.show() for p in spec.params) if not spec.judge else "…"
        table.add_row(
            spec.name,
            escape(args),
            "yes" if spec.liveness else "",
            "skipped (LLM judge)" if spec.judge else spec.strategy,
            escape(spec.description),
        )
    console.print(table)


@app.command()
def atoms() -> None:
    """List the atom registry (what ltl formulas may use)."""
    table = Table("atom", "args", "type", "from", "description", "unknown when", title="atoms")
    for spec in atom_registry.ATOMS:
        args = ", ".join(f"{p.name}: {p.kind}" for p in spec.params)
        if spec.variadic:
            args += "…"
        name = spec.name + (f" ({', '.join(spec.aliases)})" if spec.aliases else "")
        sources = ", ".join(sorted(spec.sources)) or "config"
        table.add_row(name, escape(args), spec.value, sources, spec.description, spec.unknown)
    _console().print(table)


def _summary(console: Console, cfg: Config) -> None:
    console.print(f"[bold]{len(cfg.files)}[/] file(s), [bold]{len(cfg.agents)}[/] agent(s), "
                  f"[bold]{len(cfg.contracts)}[/] contract(s)")  # fmt: skip
    for a in cfg.agents.values():
        perms = ", ".join(a.permissions) or "-"
        incl = ", ".join(a.includes) or "-"
        console.print(
            f"  agent {escape(a.id)}: permissions {escape(perms)}; includes {escape(incl)}"
        )
    table = Table("id", "agent", "severity", "strategy", "guarantees", title="contracts")
    for c in cfg.contracts:
        strategy = c.strategy.kind + (f" → {c.strategy.safe_tool}" if c.strategy.safe_tool else "")
        texts = "\n".join(g.text + (" (skipped)" if g.skipped else "") for g in c.guarantees)
        if c.assumptions:
            texts = "assume " + " & ".join(a.text for a in c.assumptions) + "\n" + texts
        table.add_row(escape(c.id), escape(c.agent), c.severity, escape(strategy), escape(texts))
    console.print(table)
    if cfg.skipped:
        console.print(f"[yellow]skipped clauses ({len(cfg.skipped)}), never counted as a pass:[/]")
        for cid, reason in cfg.skipped:
            console.print(f"  {escape(cid)}: {escape(reason)}")
    if cfg.ignored:
        keys = Counter(entry.rsplit(".", 1)[-1].rsplit(": ", 1)[-1] for entry in cfg.ignored)
        shown = ", ".join(f"{k} ({n}×)" for k, n in sorted(keys.items()))
        console.print(f"ignored keys (not used by the audit): {escape(shown)}")
        for entry in cfg.ignored:
            console.print(f"  {escape(entry)}", style="dim")


@app.command()
def validate(
    files: list[Path] = typer.Argument(..., help="sponsio.yaml files to check."),  # noqa: B008
) -> None:
    """Load configuration files; print every error (exit 2) or a summary (exit 0)."""
    console = _console()
    try:
        cfg = load_config(files)
    except ConfigError as e:
        err = Console(stderr=True, soft_wrap=True, highlight=False)
        for issue in e.errors:
            err.print(escape(str(issue)))
        err.print(f"{len(e.errors)} error(s)")
        raise typer.Exit(EXIT_CONFIG) from None
    _summary(console, cfg)


app.command()(scan)
app.command()(explain)
app.command()(report)


def main() -> None:
    """Entry point for ``python -m sponsio_audit.cli``."""
    app()


if __name__ == "__main__":
    main()
