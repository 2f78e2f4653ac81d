"""``recursion.deep``'s interrupt (Ctrl-C of the caller, raised in its helper thread) waits
for a ``shielded`` block to end: code that calls back into Python from C++ is not broken
into (an import of DuckDB so interrupted aborted the interpreter)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from sponsio_audit.recursion import deep, shielded


def _ctrl_c_soon() -> None:
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals")
def test_an_interrupt_inside_a_shield_is_raised_where_the_shield_ends() -> None:
    steps: list[str] = []

    def body() -> None:
        with shielded():
            _ctrl_c_soon()
            end = time.monotonic() + 0.5
            while time.monotonic() < end:  # Python steps: an unshielded thread is broken here
                pass
            steps.append("the shielded block ran to its end")
        steps.append("after the block")  # never: the interrupt is raised as the block ends

    with pytest.raises(KeyboardInterrupt):
        deep(body)
    assert steps == ["the shielded block ran to its end"]


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals")
def test_an_interrupt_outside_a_shield_breaks_in_at_once() -> None:
    steps: list[str] = []

    def body() -> None:
        _ctrl_c_soon()
        end = time.monotonic() + 2
        while time.monotonic() < end:
            pass
        steps.append("ran to its end")

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        deep(body)
    assert steps == [] and time.monotonic() - started < 1.5
