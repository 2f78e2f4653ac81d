"""Fast paths for the two common future shapes: response and bounded response.

``G(p → F q)`` (``always_followed_by``) and ``G(p → F[lo,hi] q)``
(``deadline``), with p and q future-free, are monitored with a few state
slots instead of ``ltl.monitor.Monitor``; ``G(r ∨ F q)`` and ``G F q`` are
the same shapes with the escape ``e = ¬p`` written out (``e = r``, false).
Position i opens the obligation ``e(i) ∨ F q`` (resp. ``∨ F[lo,hi] q``);
its Kleene value only grows as q is seen, so each open obligation is just
False ("hard") or None ("maybe": e or some q was unknown), and one that
becomes True is dropped. Everything follows SEMANTICS.md §4.1 exactly as
``reference.prefix_value`` and ``reference.check`` do:

* response: with the future open every obligation can still be met, so
  the prefix value is never false and the clause never fires before the
  end. State: the earliest hard obligation (q false at every position
  since, so it is the first position whose ψ is false at the end: the
  ``opened`` of the liveness verdict) and whether a maybe one is open. An
  unknown q turns every open obligation into a maybe; a true q clears all.
* bounded: an obligation closes once its window ``[i+lo, i+hi]`` is past;
  the prefix value is the conjunction of the closed ones (the open ones
  read true), so the clause fires at the event that closes the first false
  window (the blame). State: the open obligations, (start, value), at most
  ``hi + 1`` of them, and the conjunction so far. At the end the open ones
  read their window cut at the last event.

``tests/guard/test_fast.py`` holds both against the reference.
"""

from __future__ import annotations

from typing import Any

from sponsio_audit.guard.past import Compiler
from sponsio_audit.ltl.ast import (
    Always,
    Bool,
    Eventually,
    EventuallyWithin,
    Formula,
    Implies,
    Not,
    Or,
    is_future_free,
)
from sponsio_audit.ltl.reference import Check, K
from sponsio_audit.vocab import GUARANTEE, LIVENESS

Shape = tuple[Formula, Formula, int, int]
"""(escape e, q, lo, hi) of ``G(e ∨ F[lo,hi] q)``; hi < 0 for ``F q``."""


def shape(f: Formula) -> Shape | None:
    """The response shape of ``f`` (see the module doc), or None."""
    if not isinstance(f, Always):
        return None
    body = f.arg
    esc: Formula = Bool(False)
    if isinstance(body, Implies):
        esc, body = Not(body.left), body.right
    elif isinstance(body, Or) and isinstance(body.right, (Eventually, EventuallyWithin)):
        esc, body = body.left, body.right
    elif isinstance(body, Or) and isinstance(body.left, (Eventually, EventuallyWithin)):
        esc, body = body.right, body.left
    if isinstance(body, Eventually):
        lo, hi = 0, -1
    elif isinstance(body, EventuallyWithin) and 0 <= body.a <= body.b:
        lo, hi = body.a, body.b
    else:
        return None
    q = body.arg
    if not (is_future_free(esc) and is_future_free(q)):
        return None
    return esc, q, lo, hi


class Obligation:
    """One response clause emitted into a ``Compiler`` (state slots, step lines)."""

    def __init__(self, c: Compiler, sh: Shape, key: Any, fired: str) -> None:
        esc, q, self.lo, self.hi = sh
        e, x = c.emit(esc), c.emit(q)
        add = c.lines.append
        if self.hi < 0:
            # the earliest hard start, whether a maybe is open
            self.slots: tuple[int, ...] = (c.slot(-1, (key, 0)), c.slot(False, (key, 1)))
            h, m = self.slots
            if c.kind[e] == c.kind[x] == "b":  # two-valued here (maybe may be set elsewhere)
                opens = f"s[{h}] < 0" if e == "False" else f"not {e} and s[{h}] < 0"
                if x == "True":
                    add(f"s[{h}] = -1; s[{m}] = False")
                elif x == "False":
                    if e != "True":
                        add(f"if {opens}: s[{h}] = i")
                else:
                    add(f"if {x}: s[{h}] = -1; s[{m}] = False")
                    if e != "True":
                        add(f"elif {opens}: s[{h}] = i")
                return
            add(f"if {x} is True: s[{h}] = -1; s[{m}] = False")
            add(f"elif {x} is None and s[{h}] >= 0: s[{h}] = -1; s[{m}] = True")
            add(f"if {e} is not True and {x} is not True:")
            add(f"    if {e} is False and {x} is False:")
            add(f"        if s[{h}] < 0: s[{h}] = i")
            add(f"    else: s[{m}] = True")
            return
        # the open ones, the conjunction of the closed ones, the blame
        self.slots = (c.slot((), (key, 0)), c.slot(True, (key, 1)), c.slot(-1, (key, 2)))
        p, k, b = self.slots
        c.consts["_window"] = window
        add(f"{fired} = False")
        if e == "True" and x == "False":  # nothing opens, q is false: only a window may close
            add(f"if s[{p}] and s[{p}][0][0] == i - {self.hi}:")
        elif e == "True":
            add(f"if s[{p}]:")
        else:
            add(f"if s[{p}] or {e} is not True:")
        add(f"    s[{p}], cl = _window(s[{p}], i, {e}, {x}, {self.lo}, {self.hi})")
        add("    if cl is False:")
        add(f"        if s[{k}] is not False: s[{b}] = i; {fired} = True")
        add(f"        s[{k}] = False")
        add(f"    elif cl is None and s[{k}] is True: s[{k}] = None")

    def check(self, s: list[Any]) -> Check:
        """The verdict if the trace ended now (``reference.check`` of the clause)."""
        last = s[0] - 1
        if self.hi < 0:
            hard, maybe = (s[j] for j in self.slots)
            if hard >= 0:
                return Check(False, LIVENESS, last, (last,), hard)
            return Check(None if maybe else True)
        pending, conj, blame = (s[j] for j in self.slots)
        if conj is False:
            return Check(False, GUARANTEE, blame, (blame,))
        value: K = conj
        opened = None
        for start, v in pending:
            if v is False:
                value = False
                opened = start if opened is None else opened
            elif value is True:
                value = None
        if value is False:
            return Check(False, LIVENESS, last, (last,), opened)
        return Check(value)


def _meet(closed: K, v: K) -> K:
    return False if v is False or closed is False else (None if v is None else closed)


def window(
    pending: tuple[tuple[int, K], ...], i: int, e: K, q: K, lo: int, hi: int
) -> tuple[tuple[tuple[int, K], ...], K]:
    """Progress the open bounded obligations over position i; also open the one of i.

    Returns the obligations still open and the conjunction of those closed at i.
    """
    closed: K = True
    keep = []
    for start, v in pending:
        if i >= start + lo:
            if q is True:
                continue
            if q is None:
                v = None
        if i == start + hi:
            closed = _meet(closed, v)
        else:
            keep.append((start, v))
    if e is not True:
        v = e
        if lo == 0 and q is not False:
            v = True if q is True else None
        if v is not True:
            if hi == 0:
                closed = _meet(closed, v)
            else:
                keep.append((i, v))
    return tuple(keep), closed
