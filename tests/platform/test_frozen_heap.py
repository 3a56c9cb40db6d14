"""A web process freezes its long-lived objects (memory_platform.heap.FrozenHeap): once at start and
once after its first requests, so the collector's full passes walk only what came after."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from memory_platform.heap import FrozenHeap


@pytest.fixture(autouse=True)
def _thaw() -> Iterator[None]:
    yield
    gc.unfreeze()  # this test process must not keep its objects out of the collector's sight


def _app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", [])
    return [environ["PATH_INFO"].encode()]


def _call(app: FrozenHeap, path: str = "/") -> list[bytes]:
    return list(app({"PATH_INFO": path}, lambda status, headers: None))


def _frozen(obj: object) -> bool:
    """Whether a tracked object is out of the collector's generations (frozen); by identity, as the
    freeze count also drops whenever a frozen object is freed."""
    return not any(tracked is obj for tracked in gc.get_objects())


def test_it_freezes_at_start_and_after_the_first_requests() -> None:
    gc.unfreeze()
    alive_at_start = [["started"]]  # lists are tracked by the collector
    app = FrozenHeap(_app, after=3)
    assert _frozen(alive_at_start)
    assert gc.get_freeze_count() > 0

    assert _call(app, "/one") == [b"/one"]
    assert _call(app, "/two") == [b"/two"]
    loaded = [[n] for n in range(500)]  # what the first requests leave behind
    assert not _frozen(loaded)

    assert _call(app, "/three") == [b"/three"]
    assert _frozen(loaded)

    later = [["later"]]
    for n in range(5):
        assert _call(app, f"/{n}") == [f"/{n}".encode()]
    assert not _frozen(later)  # only once


def test_garbage_is_collected_before_it_is_frozen() -> None:
    gc.unfreeze()

    class Cycle:
        pass

    gc.collect()
    gc.disable()
    try:
        cycle = Cycle()
        cycle.me = cycle  # type: ignore[attr-defined]
        del cycle
        FrozenHeap(_app)
        assert not [obj for obj in gc.get_objects() if type(obj) is Cycle]
        gc.unfreeze()
        assert not [obj for obj in gc.get_objects() if type(obj) is Cycle]  # freed, not frozen
    finally:
        gc.enable()
