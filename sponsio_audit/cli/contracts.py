"""The contracts a command runs: ``--contracts`` files and ``--pack`` names, or what is found.

With neither option, ``config.discover`` looks for ``sponsio.yaml``,
``.sponsio.yaml`` or ``[tool.sponsio-audit]`` from the current folder up
to the repository root, and the ``default`` pack is used when it finds
nothing. Every source is loaded, so every problem is listed (exit 2).
``Sources`` says what is in force, for the report header and
``--show-config``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sponsio_audit.cli.common import EXIT_NO_CONTRACT, UsageProblem, config_problem

ENV_CONTRACTS = "SPONSIO_AUDIT_CONTRACTS"


@dataclass(frozen=True)
class Sources:
    """What is in force: the sources (files, packs, how chosen) and where discovery looked."""

    items: tuple[Any, ...]  # config.ConfigSource
    searched: tuple[Path, ...] = ()
    contracts: int = 0

    def header(self) -> str:
        """One line naming the files and packs in force: ``contracts: a.yaml (found: …)``."""
        parts = []
        for s in self.items:
            how = f" ({s.found_by})" if s.found_by not in ("--contracts", "--pack") else ""
            parts.append(s.show() + how)
        return "contracts: " + (", ".join(parts) if parts else "(none)")


def _env_named(files: list[Path]) -> bool:
    value = os.environ.get(ENV_CONTRACTS, "").split()
    return bool(value) and [str(f) for f in files] == value


def resolve(files: list[Path], packs: list[str], cwd: Path | None = None) -> tuple[
    list[Path], list[str], Sources
]:  # fmt: skip
    """The files and packs to load: as given, or discovered (see the module docstring)."""
    from sponsio_audit.config import ConfigError, ConfigSource, discover

    if not files:  # the variable stands for the flag (README: separated by spaces)
        files = [Path(w) for w in os.environ.get(ENV_CONTRACTS, "").split()]
    if files or packs:
        how = f"${ENV_CONTRACTS}" if _env_named(files) else "--contracts"
        items = (
            *(ConfigSource(str(f), None, how) for f in files),
            *(ConfigSource(None, p, "--pack") for p in packs),
        )
        return list(files), list(packs), Sources(tuple(items))
    try:
        found = discover(cwd or Path.cwd())
    except ConfigError as e:
        raise config_problem([str(issue) for issue in e.errors]) from None
    items = found.sources()
    packs = [s.pack for s in items if s.pack is not None]
    return list(found.files), packs, Sources(items, found.searched)


def load(files: list[Path], packs: list[str], cwd: Path | None = None) -> tuple[Any, Sources]:
    """The merged configuration of ``files`` and ``packs``, or of what discovery finds."""
    from dataclasses import replace

    from sponsio_audit.config import Config, ConfigError, load_config, load_pack
    from sponsio_audit.recursion import TooDeep, deep

    files, packs, src = resolve(files, packs, cwd)
    problems: list[str] = []
    merged = Config()
    sources: list[tuple[str, Any]] = [("files", [str(p) for p in files])] if files else []
    sources += [("pack", name) for name in packs]
    for kind, what in sources:
        try:  # deep: a formula nested 1 000 deep parses (recursion.py)
            cfg = deep(load_config, what) if kind == "files" else deep(load_pack, what)
        except ConfigError as e:
            problems += [str(issue) for issue in e.errors]
            continue
        except TooDeep as e:
            problems.append(f"{', '.join(what) if kind == 'files' else what}: {e}")
            continue
        merged.contracts += cfg.contracts
        merged.files += [f for f in cfg.files if f not in merged.files]
        merged.limits += cfg.limits
        if cfg.regex_timeout_ms is not None:  # a later file's setting wins, as for limits
            merged.regex_timeout_ms = cfg.regex_timeout_ms
        for aid, agent in cfg.agents.items():
            merged.agents.setdefault(aid, agent)
    seen: set[str] = set()
    for c in merged.contracts:
        if c.id in seen:
            problems.append(f"<config>: {c.id}: contract id given twice")
        seen.add(c.id)
    if problems:
        raise config_problem(problems)
    return merged, replace(src, contracts=len(merged.contracts))


def chosen(cfg: Any, agent: str | None) -> list[Any]:
    """The contracts that run (``--agent`` keeps that agent's and the ``*`` ones)."""
    return [c for c in cfg.contracts if agent is None or c.agent in (agent, "*")]


def checkable(contract: Any) -> bool:
    """Whether an offline audit can decide anything of ``contract``: some guarantee is not
    skipped, and no assumption is (a skipped assumption skips the whole contract)."""
    if any(a.skipped for a in contract.assumptions):
        return False
    return any(not g.skipped for g in contract.guarantees)


def require(cfg: Any, src: Sources, agent: str | None, allow_empty: bool) -> None:
    """Exit 6 (no contract) when nothing would be checked, unless ``--allow-empty``."""
    run = chosen(cfg, agent)
    if allow_empty or any(checkable(c) for c in run):
        return
    where = src.header().removeprefix("contracts: ")
    if run:
        why = f"all {len(run)} contracts in {where} are skipped offline (e.g. an LLM judge)"
    else:
        extra = f" for agent {agent}" if agent is not None and cfg.contracts else ""
        why = f"no contract to check{extra} in {where}"
    raise UsageProblem([f"{why} (--allow-empty accepts it)"], EXIT_NO_CONTRACT)


def show(cfg: Any, src: Sources) -> list[str]:
    """The lines of ``--show-config``: each source with its contract count, where it looked."""
    from sponsio_audit.config import load_config, load_pack

    lines = [src.header(), f"{len(cfg.contracts)} contracts in force:"]
    for s in src.items:  # each loaded once more on its own, to count its contracts
        if s.path is not None:
            n = len(load_config(s.path).contracts)
            lines.append(f"  file {s.path}: {n} contracts ({s.found_by})")
        else:
            n = len(load_pack(s.pack).contracts)
            lines.append(f"  pack {s.pack}: {n} contracts ({s.found_by})")
    if src.searched:
        lines.append("searched: " + ", ".join(str(d) for d in src.searched))
    return lines
