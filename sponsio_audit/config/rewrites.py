"""Per-agent ``workspace:``, ``<agent>`` and ``tool_rename:`` rewrites, as Sponsio applies them.

ARCHITECTURE.md "Configuration compatibility": in the ``args`` (recursively
into lists) and ``ltl`` of every constraint of an agent's contracts, its own
and the ones its packs bring in (never in ``pattern``, ``desc`` or a
phrase), ``<workspace>/`` becomes the agent's ``workspace`` with one trailing
``/``, ``<agent>`` becomes the agent id, and each ``tool_rename`` entry
``old: new`` renames the whole word ``old``. A pack contract that keeps a
``<workspace>/`` placeholder because the agent sets no ``workspace`` is a
configuration error naming the agent, as in Sponsio; a pack file loaded on
its own keeps its placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sponsio_audit.config.documents import Doc, YamlPath

WORKSPACE = "<workspace>/"
AGENT = "<agent>"
_CONSTRAINT_KEYS = ("G", "guarantee", "A", "assumption")


@dataclass(frozen=True)
class Rewrite:
    """One agent's rewrites (no-ops when it sets neither ``workspace`` nor ``tool_rename``)."""

    agent: str
    workspace: str | None = None
    renames: Mapping[str, str] = field(default_factory=dict)

    def text(self, s: str) -> str:
        """One string of ``args`` or ``ltl`` rewritten."""
        if self.workspace is not None:
            s = s.replace(WORKSPACE, self.workspace.rstrip("/") + "/")
        if self.agent != "*":
            s = s.replace(AGENT, self.agent)
        for old, new in self.renames.items():
            s = re.sub(rf"\b{re.escape(old)}\b", new, s)
        return s

    def arg(self, a: Any) -> Any:
        """One ``args`` element rewritten (lists recursively; a whole renamed tool too)."""
        if isinstance(a, str):
            out = self.text(a)
            return self.renames.get(out, out)
        if isinstance(a, list):
            return [self.arg(x) for x in a]
        if isinstance(a, dict):
            return {k: self.arg(v) for k, v in a.items()}
        return a

    def item(self, item: Any) -> Any:
        """One constraint item (``{pattern, args}`` or ``{ltl}``) rewritten; phrases as they are."""
        if not isinstance(item, dict):
            return item
        out = dict(item)
        if "args" in out:
            out["args"] = self.arg(out["args"])
        if isinstance(out.get("ltl"), str):
            out["ltl"] = self.text(out["ltl"])
        return out

    def contract(self, doc: Doc, data: Any, path: YamlPath, from_pack: bool) -> Any:
        """A contract mapping with every constraint rewritten; errors go to ``doc``."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key in _CONSTRAINT_KEYS:
            v = out.get(key)
            if v is not None:
                out[key] = [self.item(x) for x in v] if isinstance(v, list) else self.item(v)
        if from_pack and self.workspace is None:
            for key in _CONSTRAINT_KEYS:
                if WORKSPACE in repr(out.get(key)):
                    doc.err(
                        (*path, key),
                        f"agent {self.agent!r} includes a contract that uses the "
                        f"'{WORKSPACE}' placeholder but sets no workspace: add "
                        'workspace: "/path/to/your/repo" to the agent',
                    )
        return out


def agent_rewrite(doc: Doc, agent: str, body: Mapping[str, Any], path: YamlPath) -> Rewrite:
    """The rewrites an agent's ``workspace`` and ``tool_rename`` ask for (errors go to ``doc``)."""
    workspace = body.get("workspace")
    if workspace is not None and not (isinstance(workspace, str) and workspace.strip()):
        doc.err((*path, "workspace"), f"expected a non-empty path string, got {workspace!r}")
        workspace = None
    raw = body.get("tool_rename")
    renames: dict[str, str] = {}
    if raw is not None and not isinstance(raw, dict):
        doc.err((*path, "tool_rename"), "expected a mapping of old tool name to new tool name")
    elif raw is not None:
        for k, v in raw.items():
            if not (isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip()):
                doc.err((*path, "tool_rename", str(k)), f"expected a tool name, got {v!r}")
            elif k == v:
                doc.err((*path, "tool_rename", k), f"renames {k!r} to itself")
            else:
                renames[k] = v
        for k, v in renames.items():
            if renames.get(v) == k:
                doc.err((*path, "tool_rename", k), f"renames {k!r} and {v!r} into each other")
    return Rewrite(agent, workspace, renames)
