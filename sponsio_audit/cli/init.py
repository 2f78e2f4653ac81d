"""``sponsio-audit init``: write a commented starter ``sponsio.yaml`` that includes a shipped pack.

The file loads as it is (a test holds it to the pack's contracts) and
says in comments how to scope it to an agent, add a contract, and run
the audit.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from sponsio_audit.cli.common import UsageProblem, config_problem, guarded, write_text
from sponsio_audit.cli.listing import cell

TEMPLATE = """\
# sponsio.yaml: the contracts sponsio-audit checks your agents' traces against.
# Written by `sponsio-audit init --pack {pack}`; check it with `sponsio-audit validate {name}`.
#
# sponsio-audit finds this file by itself: with no --contracts it looks for
# sponsio.yaml, then .sponsio.yaml, then [tool.sponsio-audit] in pyproject.toml,
# from the current folder up to the repository root.
#
#   sponsio-audit scan traces/              # audit OTLP exports, session logs, transcripts
#   sponsio-audit scan traces/ -o audit.sarif -o audit.html
#
# Formulas, patterns and verdicts: `sponsio-audit patterns`, `sponsio-audit atoms`.
version: "1"

agents:
  # The agent a block applies to: the agent name recorded in the traces
  # (gen_ai.agent.name), or "*" for every agent.
  {agent}:
    # The shipped pack `{pack}` ({count} contracts; `sponsio-audit patterns --packs` lists all):
{listing}
    include: [{pack_quoted}]
    # Your own contracts go here, for example:
    # contracts:
    #   - id: refund_after_policy
    #     desc: "A refund is issued only after the refund policy was checked"
    #     severity: high            # high, medium or low
    #     strategy: block           # block, escalate, warn or redirect (what a guard does)
    #     G:
    #       pattern: must_precede   # or `ltl: 'G(called(issue_refund) -> O called(check_policy))'`
    #       args: [check_policy, issue_refund]
"""


def _quoted(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def init(
    pack: Annotated[
        str, typer.Option("--pack", help="Shipped pack to include (see `patterns --packs`).")
    ] = "default",
    agent: Annotated[
        str, typer.Option("--agent", help="Agent the pack applies to ('*': every agent).")
    ] = "*",
    path: Annotated[Path, typer.Option("--path", help="File to write.")] = Path("sponsio.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented starter sponsio.yaml that includes a shipped pack.

    Example: sponsio-audit init --pack sponsio:capability/filesystem --agent coder
    """
    from sponsio_audit.config import ConfigError, load_pack

    with guarded():
        if path.exists() and not force:
            raise UsageProblem([f"{path}: exists already (--force overwrites it)"])
        try:
            cfg = load_pack(pack)
        except ConfigError as e:
            raise config_problem([str(issue) for issue in e.errors]) from None
        ids = [
            f"    #   {cell(c.id)} ({c.severity}): {cell(c.description)}".rstrip()
            for c in cfg.contracts
        ]
        text = TEMPLATE.format(
            pack=pack,
            pack_quoted=_quoted(pack),
            name=path.name,
            agent=_quoted(agent),
            count=len(cfg.contracts),
            listing="\n".join(ids) if ids else "    #   (none)",
        )
        write_text(path, text)
    sys.stderr.write(f"wrote {path}: agent {agent} includes pack {pack}\n")
