"""The pattern library (SEMANTICS.md §6): one registry of named, typed formula factories.

One row per pattern (``spec.PatternSpec``) carries its typed parameters,
formula factory, liveness flag, default strategy, descriptions and
evidence sentence. ``params`` binds YAML-style arguments; ``formulas``
holds the helpers the factories share; ``core`` the §6 patterns;
``sponsio`` the §6.1 names existing Sponsio configurations use;
``registry`` the read-only table of both; ``evidence`` the sentence of one
violation.
"""

from sponsio_audit.ltl.patterns.core import CORE, INJECTION_MARKERS, PII_REGEXES
from sponsio_audit.ltl.patterns.evidence import MAX_EVIDENCE, describe
from sponsio_audit.ltl.patterns.formulas import G, c, conj, disj, le, when_called
from sponsio_audit.ltl.patterns.params import (
    LIST_KINDS,
    LOOKAROUND_SKIP,
    TOKEN_KINDS,
    Param,
    PatternArgError,
    bind,
)
from sponsio_audit.ltl.patterns.registry import build, lookup, registry
from sponsio_audit.ltl.patterns.spec import JUDGE_SKIP, PatternResult, PatternSpec, Sentence
from sponsio_audit.ltl.patterns.sponsio import JUDGE_NAMES
from sponsio_audit.regexes import RegexError, compile_regex

__all__ = [
    "CORE",
    "INJECTION_MARKERS",
    "JUDGE_NAMES",
    "JUDGE_SKIP",
    "LIST_KINDS",
    "LOOKAROUND_SKIP",
    "MAX_EVIDENCE",
    "PII_REGEXES",
    "TOKEN_KINDS",
    "G",
    "Param",
    "PatternArgError",
    "PatternResult",
    "PatternSpec",
    "RegexError",
    "Sentence",
    "bind",
    "build",
    "c",
    "compile_regex",
    "conj",
    "describe",
    "disj",
    "le",
    "lookup",
    "registry",
    "when_called",
]
