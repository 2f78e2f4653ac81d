"""The contracts a command runs: ``--contracts`` files and ``--pack`` names, loaded together.

Every source is loaded, so every problem is listed (exit 2). ``Sources``
says what is in force, for the report header and ``--show-config``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sponsio_audit.cli.common import EXIT_NO_CONTRACT, UsageProblem, config_problem


@dataclass(frozen=True)
class Sources:
    """What is in force: contract files, packs, and how the files were found."""

    files: tuple[str, ...] = ()
    packs: tuple[str, ...] = ()
    found_by: str = "--contracts"
    contracts: int = 0
    config_files: tuple[str, ...] = field(default=())

    def header(self) -> str:
        """One line naming the files and packs in force (``contracts: …``)."""
        parts = [*self.files, *(f"pack {p}" for p in self.packs)]
        what = ", ".join(parts) if parts else "(none)"
        how = f" ({self.found_by})" if self.files and self.found_by != "--contracts" else ""
        return f"contracts: {what}{how}"


def load(
    files: list[Path], packs: list[str], *, found_by: str = "--contracts"
) -> tuple[Any, Sources]:
    """The merged configuration of ``files`` and ``packs`` (``default`` when both are empty)."""
    from sponsio_audit.config import Config, ConfigError, load_config, load_pack

    problems: list[str] = []
    merged = Config()
    chosen = list(packs) or ([] if files else ["default"])
    sources: list[tuple[str, Any]] = [("files", [str(p) for p in files])] if files else []
    sources += [("pack", name) for name in chosen]
    for kind, what in sources:
        try:
            cfg = load_config(what) if kind == "files" else load_pack(what)
        except ConfigError as e:
            problems += [str(issue) for issue in e.errors]
            continue
        merged.contracts += cfg.contracts
        merged.files += [f for f in cfg.files if f not in merged.files]
        for aid, agent in cfg.agents.items():
            merged.agents.setdefault(aid, agent)
    seen: set[str] = set()
    for c in merged.contracts:
        if c.id in seen:
            problems.append(f"<config>: {c.id}: contract id given twice")
        seen.add(c.id)
    if problems:
        raise config_problem(problems)
    src = Sources(
        files=tuple(str(p) for p in files),
        packs=tuple(chosen),
        found_by=found_by,
        contracts=len(merged.contracts),
        config_files=tuple(str(p) for p in merged.files),
    )
    return merged, src


def chosen(cfg: Any, agent: str | None) -> list[Any]:
    """The contracts that run (``--agent`` keeps that agent's and the ``*`` ones)."""
    return [c for c in cfg.contracts if agent is None or c.agent in (agent, "*")]


def require(cfg: Any, src: Sources, agent: str | None, allow_empty: bool) -> None:
    """Exit 6 (no contract) when nothing would be checked, unless ``--allow-empty``."""
    if chosen(cfg, agent) or allow_empty:
        return
    where = src.header().removeprefix("contracts: ")
    extra = f" for agent {agent}" if agent is not None and cfg.contracts else ""
    raise UsageProblem(
        [f"no contract to check{extra} in {where} (--allow-empty accepts it)"], EXIT_NO_CONTRACT
    )
