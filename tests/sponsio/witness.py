"""Traces generated from a contract's meaning: for each atom it uses, events that make it true.

``witness(regex)`` builds a string the regex matches from the regex's own
parse tree (literals kept, classes by a member, repeats at their minimum,
alternations by their first branch, lookbehind and anchors by nothing),
checked with the project's regex policy. ``candidate_traces`` combines the
atoms' witness events (and a neutral call) into short traces, plus each
witness repeated past the largest number the contract compares with, so
that counters can overflow.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

from sponsio_audit.event import Event
from sponsio_audit.ltl.ast import Atom, Cmp, Num, atoms, subformulas
from sponsio_audit.ltl.contract import Contract
from sponsio_audit.regexes import RegexError, compile_regex

try:  # Python 3.11+
    import re._constants as C  # type: ignore[import-not-found]
    import re._parser as P  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

AGENT = "bot"
_CATEGORY = {
    C.CATEGORY_DIGIT: "0",
    C.CATEGORY_NOT_DIGIT: "a",
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_SPACE: "a",
    C.CATEGORY_WORD: "a",
    C.CATEGORY_NOT_WORD: " ",
}


def _in_class(ch: str, items: Any) -> bool:
    o = ord(ch)
    for op, av in items:
        if op is C.LITERAL and av == o:
            return True
        if op is C.RANGE and av[0] <= o <= av[1]:
            return True
        if op is C.CATEGORY:
            rep = _CATEGORY.get(av)
            if (
                rep is not None
                and (ch.isspace() == rep.isspace())
                and (av not in (C.CATEGORY_DIGIT,) or ch.isdigit())
            ):
                return True
    return False


def _member(items: Any) -> str:
    if items and items[0][0] is C.NEGATE:
        rest = items[1:]
        return next((ch for ch in " a0-~_x" if not _in_class(ch, rest)), "\x01")
    for op, av in items:
        if op is C.LITERAL:
            return chr(av)
        if op is C.RANGE:
            return chr(av[0])
        if op is C.CATEGORY:
            return _CATEGORY.get(av, "a")
    return "a"


def _gen(parsed: Any, groups: dict[int, str], at_least_one: Any) -> str:
    out = []
    for op, av in parsed:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append("a" if chr(av) != "a" else "b")
        elif op is C.ANY:
            out.append(" ")
        elif op is C.IN:
            out.append(_member(av))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, _hi, sub = av
            one = at_least_one() if callable(at_least_one) else at_least_one
            n = max(lo, 1) if one else max(lo, 0)
            out.append(_gen(sub, groups, at_least_one) * n)
        elif op is C.SUBPATTERN:
            gid, _add, _del, sub = av
            text = _gen(sub, groups, at_least_one)
            if gid:
                groups[gid] = text
            out.append(text)
        elif op is C.BRANCH:
            out.append(_gen(av[1][0], groups, at_least_one))
        elif op is C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is C.ASSERT:  # positive lookahead: put what it wants right here
            direction, sub = av
            if direction > 0:
                out.append(_gen(sub, groups, at_least_one) + " ")
        # anchors, negative lookaround, lookbehind: nothing
    return "".join(out)


def witness(regex: str) -> str | None:
    """A string ``regex`` matches, or None when this simple generator finds none."""
    try:
        rx = compile_regex(regex)
        parsed = P.parse(regex)
    except (RegexError, Exception):
        return None
    rng = random.Random(regex)  # a mix of empty and non-empty repeats, the same every run
    tries = [False, True, *(lambda: rng.random() < 0.5 for _ in range(40))]
    for mode in tries:
        base = _gen(parsed, {}, mode)
        for cand in (base, f" {base} ", f"{base} x", f"x {base}", base.lower(), base.upper()):
            try:
                if rx.search(cand) is not None:
                    return cand
            except TimeoutError:
                continue
    return None


def call(tool: str, args: dict[str, Any] | None = None, **kw: Any) -> Event:
    return Event(type="tool_call", tool=tool, args={} if args is None else args, agent=AGENT, **kw)


def ctx_update(key: str, value: Any) -> Event:
    return Event(type="context_update", args={key: value}, agent=AGENT)


def _evidence(pred: str, verdict: str, action: str) -> Event:
    """Sponsio's claim verdict as an event (``EvidenceResult.to_event``'s fields)."""
    args = {"verdict": verdict, "action": action}
    return Event(type="evidence", tool=pred, args=args, agent=AGENT)


def atom_events(a: Atom) -> list[Event]:
    """Events that make atom ``a`` true (or, for a counter, count one more)."""
    name, xs = a.name, [str(x) for x in a.args]
    match name:
        case "called" | "count" | "consecutive_count":
            return [call(xs[0])]
        case "called_any":
            return [call("zz_any_tool")]
        case "arg_has" | "called_with" | "count_with":
            w = witness(xs[1])
            return [] if w is None else [call(xs[0], {"command": w})]
        case "arg_field_has":
            w = witness(xs[2])
            return [] if w is None else [call(xs[0], {xs[1]: w})]
        case "arg_eq":
            return [call(xs[0], {xs[1]: a.args[2]})]
        case "arg_paths_within":
            inside = xs[1].rstrip("/") + "/zz"
            return [call(xs[0], {"path": inside}), call(xs[0], {"path": "/zz_outside/x"})]
        case "arg_length":
            # a length per field, so that two long fields of one call differ
            return [call(xs[0], {xs[1]: "x" * (5000 + len(xs[1]))}), call(xs[0], {xs[1]: ""})]
        case "arg_numeric":
            return [call(xs[0], {xs[1]: 10**9}), call(xs[0], {xs[1]: -(10**9)})]
        case "output_has":
            w = witness(xs[1])
            return [] if w is None else [call(xs[0], content=w)]
        case "latency_exceeds":
            return [call(xs[0], duration_ns=10**15)]
        case "llm_output_contains" | "llm_said":
            w = witness(xs[0])
            return [] if w is None else [Event(type="llm_response", content=w, agent=AGENT,
                                               tokens_total=1)]  # fmt: skip
        case "llm_input_contains" | "prompt_contains":
            w = witness(xs[0])
            return [] if w is None else [Event(type="llm_request", prompt=w, agent=AGENT)]
        case "token_count":
            return [Event(type="llm_response", content="ok", agent=AGENT, tokens_in=10**7,
                          tokens_out=10**7, tokens_total=2 * 10**7)]  # fmt: skip
        case "flow":
            return [
                Event(type="data_write", agent=xs[0], args={xs[0]: 1}),  # contains(src) too
                Event(type="message", agent=xs[0], target=xs[1], content="x"),
            ]
        case "contains":
            return [Event(type="data_write", agent=AGENT, args={xs[0]: "x"})]
        case "ctx":  # the value, and another one (a recorded context that is not v)
            return [ctx_update(xs[0], a.args[1]), ctx_update(xs[0], "zz_other")]
        case "arg_value":  # one call equal to ctx_value's witness, one that differs
            return [call(xs[0], {xs[1]: "zz_v1"}), call(xs[0], {xs[1]: "zz_v2"})]
        case "ctx_value":
            return [ctx_update(xs[0], "zz_v1")]
        case "claim_emitted":
            return [_evidence(xs[0], "MISMATCH", "block")]
        case "evidence_verdict":
            return [_evidence(xs[0], xs[1], "release")]
        case "evidence_action":
            return [_evidence(xs[0], "UNDERDETERMINED", xs[1])]
        case "ctx_matches":
            w = witness(xs[1])
            return [] if w is None else [Event(type="context_update", args={xs[0]: w},
                                               agent=AGENT)]  # fmt: skip
    return []


def _largest_number(c: Contract) -> int:
    n = 0
    for f in c.formulas():
        for g in subformulas(f):
            if isinstance(g, Cmp):
                for t in (g.left, g.right):
                    if isinstance(t, Num) and isinstance(t.value, (int, float)):
                        n = max(n, int(abs(t.value)))
    return min(n, 400)


def candidate_traces(c: Contract) -> Iterator[list[Event]]:
    """Short traces over the contract's witness events, then counter-overflowing ones."""
    pool: list[Event] = []
    for a in dict.fromkeys(a for f in c.formulas() for a in atoms(f)):
        for e in atom_events(a):
            if e not in pool:
                pool.append(e)
    calls: dict[str, dict[str, Any]] = {}
    firsts: dict[str, dict[str, Any]] = {}
    for e in pool:  # one call per tool carrying every witness argument of that tool at once
        if e.type == "tool_call" and e.tool is not None and e.args:
            calls.setdefault(e.tool, {}).update(e.args)
            first = firsts.setdefault(e.tool, {})
            first.update({k: v for k, v in e.args.items() if k not in first})
    for tool, args in [*calls.items(), *firsts.items()]:
        for extra in ({}, {"path": "/zz_outside/x"}):
            merged = call(tool, {**args, **extra})
            if merged not in pool:
                pool.append(merged)
    pool = pool[:9]
    neutral = call("zz_noop")
    yield [neutral]
    for n in (1, 2, 3):
        for combo in itertools.product(pool, repeat=n):
            yield list(combo)
    big = _largest_number(c) + 1
    for e in pool:
        yield [e] * big
        yield [neutral] + [e] * big
