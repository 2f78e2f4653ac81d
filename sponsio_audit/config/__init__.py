"""``sponsio.yaml`` → ``Contract`` objects: the configuration stage (rank 3, docs/architecture.md).

One concern a module: ``documents`` reads YAML (line numbers, ``${ENV}``,
includes, shipped packs, ``ConfigIssue``/``ConfigError``); ``phrasings``
holds Sponsio's backtick phrasings; ``clauses`` turns one constraint item
into a ``Clause``; ``loader`` walks files, agents and contracts and
collects every problem. Callers use this face.
"""

from __future__ import annotations

from sponsio_audit.config.documents import ConfigError, ConfigIssue, shipped_packs
from sponsio_audit.config.loader import AgentConfig, Config, load_config, load_pack

__all__ = [
    "AgentConfig",
    "Config",
    "ConfigError",
    "ConfigIssue",
    "load_config",
    "load_pack",
    "shipped_packs",
]
