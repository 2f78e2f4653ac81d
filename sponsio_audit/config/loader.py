"""``sponsio.yaml`` files → ``Contract`` objects, with every error named by its YAML path.

Existing Sponsio files and Sponsio's own packs load unchanged: keys the
audit has no use for are accepted and listed as ignored, backtick
phrasings are accepted, LLM-judge constraints and regexes with PCRE
lookaround load as skipped clauses. Everything else that is wrong is
collected (not just the first problem) and raised as one ``ConfigError``.
YAML parsing, includes and interpolation live in ``config.documents``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sponsio_audit.config.clauses import clause_from_item
from sponsio_audit.config.documents import (
    ConfigError,
    ConfigIssue,
    Doc,
    YamlPath,
    load_doc,
    render,
    resolve_include,
    substitute_agent,
)
from sponsio_audit.config.rewrites import Rewrite, agent_rewrite
from sponsio_audit.ltl.contract import Clause, Contract, Strategy, derive_id
from sponsio_audit.ltl.patterns import build, lookup
from sponsio_audit.vocab import SEVERITIES, STRATEGIES, assumption_skipped

TOP_KEYS = {"version", "agents", "regex_timeout_ms", "limits"}
TOP_IGNORED = {"defaults", "runtime", "tool_policy", "performance", "extractor", "judge", "tools"}
AGENT_KEYS = {"contracts", "include", "permissions", "workspace", "tool_rename"}
AGENT_IGNORED = {"customized"}
CONTRACT_KEYS = {"id", "desc", "G", "guarantee", "A", "assumption", "activate_at", "severity"}
CONTRACT_KEYS |= {"strategy", "safe_tool", "source"}
CONTRACT_IGNORED = {"alpha", "beta", "risk_profile", "costs"}


@dataclass(frozen=True)
class AgentConfig:
    """What the configuration says about one agent (``"*"`` is every agent)."""

    id: str
    permissions: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()


@dataclass
class Config:
    """A loaded configuration: contracts plus what was ignored or skipped, and from where."""

    contracts: list[Contract] = field(default_factory=list)
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    regex_timeout_ms: float | None = None  # per-search limit of lookaround regexes (None: default)
    limits: list[tuple[str, Any, str]] = field(default_factory=list)
    """``limits:`` settings ``(name, value, "FILE:LINE: limits.name")`` in file order; names
    and values are checked where they are applied (``ingest.limits.Limits.with_settings``)."""

    def contract(self, contract_id: str) -> Contract | None:
        """The contract with this id, or None."""
        return next((c for c in self.contracts if c.id == contract_id), None)


class _Loader:
    """Accumulates contracts, issues and ignored keys over files and their includes."""

    def __init__(self) -> None:
        self.config = Config()
        self.issues: list[ConfigIssue] = []
        self.seen_ids: dict[str, str] = {}
        self.rewrites: dict[str, Rewrite] = {}  # agent id -> its workspace and tool renames
        self.stack: list[Path] = []

    # -- files -------------------------------------------------------------

    def load_file(self, path: Path, label: str, agent: str | None = None) -> None:
        """Load one file; ``agent`` is the including agent for a pack's template."""
        path = path.resolve()
        if path in self.stack:
            chain = " -> ".join(p.name for p in [*self.stack, path])
            self.issues.append(ConfigIssue("include", f"include cycle: {chain}", path))
            return
        doc = load_doc(path, label, self.issues)
        if doc is None:
            return
        if path not in self.config.files:
            self.config.files.append(path)
        if agent is not None:
            doc.data = substitute_agent(doc.data, agent)
        self.stack.append(path)
        try:
            self.top(doc, agent)
        finally:
            self.stack.pop()

    def ignore(self, doc: Doc, path: YamlPath) -> None:
        entry = f"{doc.label}: {render(path)}"
        if entry not in self.config.ignored:
            self.config.ignored.append(entry)

    def keys(self, doc: Doc, data: dict[str, Any], path: YamlPath, known: set[str],
             ignored: set[str], what: str) -> None:  # fmt: skip
        for k in data:
            if k in known:
                continue
            if k in ignored:
                self.ignore(doc, (*path, k))
            else:
                expected = ", ".join(sorted(known | ignored))
                doc.err((*path, str(k)), f"unknown {what} key {k!r}; expected one of {expected}")

    def top(self, doc: Doc, agent: str | None) -> None:
        data = doc.data
        if data is None:
            return
        if not isinstance(data, dict):
            doc.err((), "expected a mapping with 'version' and 'agents'")
            return
        self.keys(doc, data, (), TOP_KEYS, TOP_IGNORED, "top-level")
        if "version" in data and str(data["version"]) != "1":
            doc.err(("version",), f"expected version 1, got {data['version']!r}")
        if "regex_timeout_ms" in data:
            ms = data["regex_timeout_ms"]
            if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms <= 0:
                doc.err(("regex_timeout_ms",), f"expected a number of milliseconds > 0, got {ms!r}")
            else:
                self.config.regex_timeout_ms = float(ms)
        if "limits" in data:
            self.limits(doc, data["limits"])
        if isinstance(data.get("tool_policy"), dict):
            self.tool_policy(doc, data["tool_policy"], agent or "*")
        agents = data.get("agents")
        if agents is None:
            return
        if not isinstance(agents, dict):
            doc.err(("agents",), "expected a mapping of agent id to its contracts")
            return
        for name, body in agents.items():
            aid = agent if (agent is not None and name == "*") else str(name)
            self.agent(doc, aid, body, ("agents", str(name)), from_pack=agent is not None)

    def limits(self, doc: Doc, limits: Any) -> None:
        """``limits: {NAME: VALUE, …}``: ingest limits, kept with the place each was set."""
        if not isinstance(limits, dict):
            doc.err(("limits",), "expected a mapping of limit name to value (sponsio-audit limits)")
            return
        for name, value in limits.items():
            path = ("limits", str(name))
            issue = ConfigIssue(render(path), "", doc.path, doc.line(path))
            self.config.limits.append((str(name), value, str(issue).removesuffix(": ")))

    def tool_policy(self, doc: Doc, policy: dict[str, Any], agent: str) -> None:
        """``tool_policy: {default: deny, approved: [...]}`` is a tool_allowlist contract."""
        if policy.get("default") != "deny":
            return
        try:
            res = build("tool_allowlist", [policy.get("approved") or []])
        except ValueError as e:
            doc.err(("tool_policy", "approved"), str(e))
            return
        clause = res.clause(desc="tool_policy: only approved tools may be called")
        cid = "tool_policy" if agent == "*" else f"{agent}.tool_policy"
        self.add(doc, ("tool_policy",), Contract(cid, agent, (clause,), description=clause.desc))

    # -- agents and contracts ---------------------------------------------

    def agent(self, doc: Doc, aid: str, body: Any, path: YamlPath, from_pack: bool) -> None:
        if body is None:
            body = {}
        if not isinstance(body, dict):
            doc.err(path, "expected a mapping with contracts, include, permissions")
            return
        self.keys(doc, body, path, AGENT_KEYS, AGENT_IGNORED, "agent")
        if not from_pack:
            self.rewrites[aid] = agent_rewrite(doc, aid, body, path)
        perms = self.strings(doc, body.get("permissions"), (*path, "permissions"), "permission")
        includes = self.strings(doc, body.get("include"), (*path, "include"), "pack name")
        old = self.config.agents.get(aid, AgentConfig(aid))
        self.config.agents[aid] = AgentConfig(
            aid,
            tuple(dict.fromkeys((*old.permissions, *perms))),
            tuple(dict.fromkeys((*old.includes, *includes))),
        )
        for i, name in enumerate(includes):
            target = resolve_include(name, doc.path.parent if doc.path else Path.cwd())
            if isinstance(target, str):
                doc.err((*path, "include", i), target)
            else:
                self.load_file(target, name, aid)
        contracts = body.get("contracts")
        if contracts is None:
            return
        if not isinstance(contracts, list):
            doc.err((*path, "contracts"), "expected a list of contracts")
            return
        for i, item in enumerate(contracts):
            self.contract(doc, aid, item, (*path, "contracts", i), from_pack)

    def strings(self, doc: Doc, value: Any, path: YamlPath, what: str) -> list[str]:
        if value is None:
            return []
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(x, str) and x for x in items):
            doc.err(path, f"expected a list of {what}s (strings)")
            return []
        return list(items)

    def contract(self, doc: Doc, agent: str, data: Any, path: YamlPath, from_pack: bool) -> None:
        if not isinstance(data, dict):
            doc.err(path, "expected a mapping with G (or guarantee), optional A, desc, …")
            return
        n_issues = len(self.issues)
        rw = self.rewrites.get(agent)
        if rw is not None:
            data = rw.contract(doc, data, path, from_pack)
        self.keys(doc, data, path, CONTRACT_KEYS, CONTRACT_IGNORED, "contract")
        for a, b in (("G", "guarantee"), ("A", "assumption")):
            if a in data and b in data:
                doc.err((*path, b), f"give either {a} or {b}, not both")
        gkey = "G" if "G" in data else "guarantee"
        akey = "A" if "A" in data else "assumption"
        source = self.opt_str(doc, data, path, "source")
        desc = self.opt_str(doc, data, path, "desc") or ""
        if gkey not in data:
            doc.err(path, "expected G (or guarantee): a constraint or a list of constraints")
        guarantees = self.clauses(doc, data.get(gkey), (*path, gkey), source, False)
        assumptions = self.clauses(doc, data.get(akey), (*path, akey), source, True)
        activate = data.get("activate_at", "global")
        if activate not in ("global", "first_match"):
            doc.err((*path, "activate_at"), f"expected global or first_match, got {activate!r}")
        severity = data.get("severity", "high")
        if severity not in SEVERITIES:
            doc.err((*path, "severity"), f"expected one of high, medium, low; got {severity!r}")
        skipped_a = next((a.skipped for a in assumptions if a.skipped), None)
        if skipped_a is not None:  # an unevaluable assumption must not make a guarantee pass
            reason = assumption_skipped(skipped_a)
            guarantees = [g if g.skipped else replace(g, skipped=reason) for g in guarantees]
        strategy = self.strategy(doc, data, path, guarantees)
        cid = self.opt_str(doc, data, path, "id")
        if len(self.issues) > n_issues:
            return
        if cid is None:
            content = json.dumps([doc.label if from_pack else "", data], sort_keys=True)
            cid = derive_id(agent, content)
            n = 2
            base = cid
            while cid in self.seen_ids:  # identical contracts: distinct ids, as Sponsio allows
                cid, n = f"{base}-{n}", n + 1
        elif from_pack and agent != "*":
            cid = f"{agent}.{cid}"
        self.add(
            doc,
            path,
            Contract(
                cid,
                agent,
                tuple(guarantees),
                tuple(assumptions),
                description=desc,
                activate_at=str(activate),
                severity=str(severity),
                strategy=strategy,
                source=source,
                per_agent=any(_per_agent(c) for c in guarantees),
            ),
        )

    def opt_str(self, doc: Doc, data: dict[str, Any], path: YamlPath, key: str) -> str | None:
        v = data.get(key)
        if v is not None and not isinstance(v, str):
            doc.err((*path, key), f"expected a string, got {v!r}")
            return None
        return v

    def strategy(self, doc: Doc, data: dict[str, Any], path: YamlPath,
                 guarantees: Sequence[Clause]) -> Strategy:  # fmt: skip
        kind = data.get("strategy")
        safe = data.get("safe_tool")
        if kind is None:
            redirects = [c for c in guarantees if c.pattern == "redirect_to_safe"]
            if redirects and safe is None:
                return Strategy("redirect", str(redirects[0].args[1]))
            kind = "redirect" if safe is not None else "block"
        if kind not in STRATEGIES:
            doc.err((*path, "strategy"), f"expected one of {', '.join(STRATEGIES)}; got {kind!r}")
            return Strategy()
        if kind == "redirect" and not (isinstance(safe, str) and safe):
            doc.err((*path, "safe_tool"), "strategy redirect needs safe_tool: the tool to call")
            return Strategy()
        if kind != "redirect" and safe is not None:
            doc.err((*path, "safe_tool"), "safe_tool is only used with strategy: redirect")
        return Strategy(str(kind), safe if kind == "redirect" else None)

    def clauses(self, doc: Doc, value: Any, path: YamlPath, source: str | None,
                assumption: bool) -> list[Clause]:  # fmt: skip
        if value is None:
            return []
        items = value if isinstance(value, list) else [value]
        out = []
        for i, item in enumerate(items):
            ipath = (*path, i) if isinstance(value, list) else path
            clause = clause_from_item(doc, item, ipath, source, assumption, self.ignore)
            if clause is not None:
                out.append(clause)
        return out

    def add(self, doc: Doc, path: YamlPath, contract: Contract) -> None:
        where = f"{doc.label}: {render(path)}"
        if doc.path is not None:
            contract = replace(contract, origin=(str(doc.path), doc.line(path)))
        if contract.id in self.seen_ids:
            doc.err(
                path,
                f"duplicate contract id {contract.id!r} (also at {self.seen_ids[contract.id]})",
            )
            return
        self.seen_ids[contract.id] = where
        self.config.contracts.append(contract)
        for kind, clauses in (("G", contract.guarantees), ("A", contract.assumptions)):
            for i, c in enumerate(clauses):
                if c.skipped is not None:
                    what = c.pattern or c.text
                    self.config.skipped.append((contract.id, f"{kind}[{i}] {what}: {c.skipped}"))


def _per_agent(clause: Clause) -> bool:
    spec = lookup(clause.pattern) if clause.pattern else None
    return spec is not None and spec.per_agent


def load_config(paths: str | Path | Sequence[str | Path]) -> Config:
    """Load one or more ``sponsio.yaml`` files; raise ``ConfigError`` listing every problem."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    loader = _Loader()
    for p in paths:
        loader.load_file(Path(p), str(p))
    if loader.issues:
        raise ConfigError(loader.issues)
    return loader.config


def load_pack(name: str) -> Config:
    """Load a shipped pack by name (``default``, ``sponsio:capability/shell``)."""
    target = resolve_include(name, Path.cwd(), packs_only=True)
    if isinstance(target, str):
        raise ConfigError([ConfigIssue("include", target)])
    loader = _Loader()
    loader.load_file(target, name)
    if loader.issues:
        raise ConfigError(loader.issues)
    return loader.config
