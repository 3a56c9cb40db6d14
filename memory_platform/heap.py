"""A web process's long-lived objects kept out of the garbage collector's full passes (gc.freeze)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable
from typing import Any

# What a WSGI application is: a callable of the environ and start_response, giving the body.
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class FrozenHeap:
    """Keeps the collector's full passes off a web process's long-lived objects (gc.freeze).

    A full collection walks every object the process holds: about 100,000 once Django, the MCP
    server and the embedding model are loaded, which took 50 to 130 ms, with the GIL held, every
    few hundred requests (the process answers nothing meanwhile). What is alive when the process
    has started, and again once its first ``after`` requests have loaded what loads on first use
    (views, the model, caches), is moved out of the collector's sight: later full passes walk only
    what came after, about a millisecond. Frozen objects are still freed when nothing refers to
    them; only a reference cycle among them would outlive the process.
    """

    def __init__(self, application: WSGIApp, *, after: int = 200) -> None:
        self.application = application
        self.after = after
        self._served = 0
        self._lock = threading.Lock()
        freeze_heap()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if self._served < self.after:
            with self._lock:
                self._served += 1
                if self._served == self.after:
                    freeze_heap()
        return self.application(environ, start_response)


def freeze_heap() -> None:
    """Collect what is garbage now, then freeze every object still alive (see FrozenHeap)."""
    gc.collect()
    gc.freeze()
