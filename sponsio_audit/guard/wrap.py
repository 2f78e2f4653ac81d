"""``guarded``: wrap a tool function (sync or async) so every call goes through a guard.

The call's arguments are bound to the function's parameter names and become
the event's ``args``. Blocked (or denied) calls raise ``ToolBlocked``
carrying the decision. A redirect runs the contract's safe tool instead,
with the same arguments: the safe tool is looked up in the ``tools`` mapping
given to the decorator, else to the guard, and its call is itself checked by
``guard_before`` (it is a real event of the session); if the safe tool is
unknown or its own call is not allowed, ``ToolBlocked`` is raised. After the
tool returns, ``guard_after`` completes the event with the result.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from sponsio_audit.guard.strategies import Decision, ToolBlocked

if TYPE_CHECKING:
    from sponsio_audit.guard.guard import Guard


def _bind(sig: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict:
    if sig is not None:
        try:
            bound = sig.bind(*args, **kwargs)
            out: dict[str, Any] = {}
            for name, value in bound.arguments.items():
                p = sig.parameters[name]
                if p.kind is inspect.Parameter.VAR_KEYWORD:
                    out.update(value)
                elif p.kind is inspect.Parameter.VAR_POSITIONAL:
                    out[name] = list(value)
                else:
                    out[name] = value
            return out
        except TypeError:
            pass
    return {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}


def guarded(
    guard: Guard,
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    tools: Mapping[str, Callable[..., Any]] | None = None,
) -> Any:
    """Wrap ``fn`` (or return a decorator when ``fn`` is None); see the module doc."""
    if fn is None:
        return lambda f: guarded(guard, f, name=name, tools=tools)
    tool: str = name or str(getattr(fn, "__name__", "tool"))
    try:
        sig: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None

    def safe_call(d: Decision) -> tuple[Decision, Callable[..., Any]]:
        target = d.redirected_to or ""
        safe = (tools or {}).get(target) or guard.tools.get(target)
        if safe is None:
            raise ToolBlocked(d)
        d2 = guard.guard_before(target, d.args)
        if not d2.allowed or d2.redirected_to is not None:
            raise ToolBlocked(d2)
        return d2, safe

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            d = guard.guard_before(tool, _bind(sig, args, kwargs))
            call: Callable[..., Any] = fn
            if d.action == "redirected":
                d, call = safe_call(d)
            elif not d.allowed:
                raise ToolBlocked(d)
            result = call(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            guard.guard_after(d, result)
            return result

        return awrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        d = guard.guard_before(tool, _bind(sig, args, kwargs))
        call: Callable[..., Any] = fn
        if d.action == "redirected":
            d, call = safe_call(d)
        elif not d.allowed:
            raise ToolBlocked(d)
        result = call(*args, **kwargs)
        guard.guard_after(d, result)
        return result

    return wrapper
