"""One row per pattern: arguments, formula builder, liveness, description and evidence.

A ``PatternSpec`` carries everything about a pattern: its typed
parameters, the factory that builds its formula, whether it is a liveness
property, its default strategy, its descriptions and the ``evidence``
sentence a violation of it reads as (SEMANTICS.md §6). ``build`` binds
arguments, checks them and returns a ``PatternResult`` that becomes a
``Clause``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sponsio_audit.ltl.ast import Atom, Formula
from sponsio_audit.ltl.contract import Clause, Strategy
from sponsio_audit.ltl.patterns.params import Param, bind
from sponsio_audit.redact import clean

JUDGE_SKIP = "needs an LLM judge"

Sentence = Callable[[tuple[Any, ...], str, str, str, str], str]
"""(args, tool, step, opened step, opened tool) → what happened at the blamed step.

Built from the contract's arguments and the offending event's tool name and
step only: argument values and outputs never enter it, so it cannot leak a
secret from a trace."""


def arg(args: tuple[Any, ...], i: int, default: object = "?") -> str:
    """Argument ``i`` of a pattern as sentence text (lists joined, control characters dropped)."""
    if i >= len(args):
        return clean(default)
    a = args[i]
    if isinstance(a, (list, tuple)):
        return clean(", ".join(str(x) for x in a))
    return clean(a)


@dataclass(frozen=True)
class PatternResult:
    """A built pattern: its formula plus what a ``Clause`` and a YAML round trip need."""

    pattern: str
    formula: Formula
    args: tuple[Any, ...]
    desc: str
    liveness: bool = False
    strategy: Strategy | None = None
    per_agent: bool = False
    skipped: str | None = None

    def clause(self, desc: str | None = None, source: str | None = None) -> Clause:
        """This result as a guarantee or assumption clause."""
        return Clause(
            self.formula,
            desc=desc or self.desc,
            source=source,
            pattern=self.pattern,
            args=self.args,
            liveness=self.liveness,
            skipped=self.skipped,
        )

    def yaml_args(self) -> list[Any]:
        """The arguments as a YAML list (tuples as lists), for writing the pattern back."""
        out = [list(a) if isinstance(a, tuple) else a for a in self.args]
        while out and out[-1] is None:
            out.pop()
        return out


Factory = Callable[..., Formula]


@dataclass(frozen=True)
class PatternSpec:
    """A registered pattern. ``factory`` takes the bound arguments by name and returns
    the formula; ``build`` does binding, checks and metadata."""

    name: str
    params: tuple[Param, ...]
    description: str
    factory: Factory
    liveness: bool = False
    strategy: str = "block"
    desc_template: str = ""
    per_agent: bool = False
    alias_of: str | None = None
    judge: bool = False
    evidence: Sentence | None = None  # an alias inherits its target's sentence

    def signature(self) -> str:
        return f"{self.name}({', '.join(p.show() for p in self.params)})"

    def build(self, args: Any = None, desc: str | None = None) -> PatternResult:
        """Bind ``args`` and build the formula; raise ``PatternArgError`` on bad arguments."""
        if self.judge:
            raw = args if isinstance(args, (list, tuple)) else ([] if args is None else [args])
            text = tuple(str(a) for a in raw)
            return PatternResult(
                self.name, Atom(self.name, text), text, desc or self.description, skipped=JUDGE_SKIP
            )
        bound, skips = bind(self.params, args)
        formula = self.factory(**bound)
        shown = {k: ", ".join(map(str, v)) if isinstance(v, tuple) else v for k, v in bound.items()}
        default_desc = (
            self.desc_template.format(**shown) if self.desc_template else self.description
        )
        strategy = None
        if self.strategy == "redirect":
            strategy = Strategy("redirect", str(bound.get("safe")))
        return PatternResult(
            self.name,
            formula,
            tuple(bound[p.name] for p in self.params),
            desc or default_desc,
            self.liveness,
            strategy,
            self.per_agent,
            skips[0] if skips else None,
        )
