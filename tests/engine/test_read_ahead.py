"""``evaluation.read_ahead``: the next table of a stream made on a thread of its own.

Its items come in order; an exception of the source is raised where its item would have
come, after the items before it; when the caller stops early (an error of its own, or
closing the iterator), the reading thread has stopped and the source is closed before
the caller goes on, so that a cursor under the stream may be closed at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from sponsio_audit.evaluation import read_ahead


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "sponsio-read"]


def test_items_come_in_order() -> None:
    assert list(read_ahead(iter(range(50)))) == list(range(50))
    assert list(read_ahead(iter([]))) == []
    assert not _readers()


def test_an_error_of_the_source_comes_where_its_item_would() -> None:
    def source() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("split trace")

    got = []
    with pytest.raises(ValueError, match="split trace"):
        for x in read_ahead(source()):
            got.append(x)
    assert got == [1, 2]
    assert not _readers()


def test_stopping_early_stops_the_reader_and_closes_the_source() -> None:
    closed = threading.Event()
    made = []

    def source() -> Iterator[int]:
        try:
            for i in range(1000):
                made.append(i)
                yield i
        finally:
            closed.set()

    items = read_ahead(source())
    assert next(items) == 0
    items.close()  # type: ignore[attr-defined]
    assert closed.is_set()
    assert not _readers()
    assert len(made) <= 3  # one item waits at most, one more being made


def test_an_error_of_the_caller_stops_the_reader() -> None:
    closed = threading.Event()

    def source() -> Iterator[int]:
        try:
            yield from range(1000)
        finally:
            closed.set()

    def caller() -> None:
        for x in read_ahead(source()):
            if x == 3:
                raise KeyError(x)

    with pytest.raises(KeyError):
        caller()
    assert closed.is_set()
    assert not _readers()


def test_an_error_keeps_no_frame_of_the_source_alive() -> None:
    """The error of the source, once handled, lets go of the source's frames at once (no
    reference cycle left for the collector): a DuckDB cursor's result held there would
    otherwise keep its transaction open (a store's CHECKPOINT then fails)."""
    import gc
    import weakref

    class Held:
        pass

    seen: list[weakref.ref[Held]] = []

    def source() -> Iterator[int]:
        held = Held()
        seen.append(weakref.ref(held))
        yield 1
        raise ValueError("unordered")

    gc.disable()
    try:
        try:
            for _ in read_ahead(source()):
                pass
        except ValueError:
            pass
        assert seen[0]() is None
    finally:
        gc.enable()


def test_an_iterator_never_begun_starts_no_reader() -> None:
    items = read_ahead(iter(range(5)))
    assert not _readers()
    items.close()  # type: ignore[attr-defined]
    assert not _readers()
