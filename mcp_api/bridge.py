"""Running the MCP SDK's coroutines from a synchronous Django view, and the tools back on the view's thread.

asgiref's ``async_to_sync`` starts a new thread and a new event loop for every call; on a busy
server that cost more than the SDK's own work for a ``memory-get``. Here one event loop per process
runs in a thread of its own, started on first use: :func:`run` hands it a coroutine and waits,
and while it waits the calling thread runs the synchronous work the coroutine asks for with
:func:`on_calling_thread` (the tool functions: Django's ORM, on the request's own database
connection and transaction, in a thread where no event loop runs). Where no view is waiting (the
stdio transport runs its own loop), that work goes through ``sync_to_async`` as usual.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from asgiref.sync import sync_to_async

T = TypeVar("T")

_Work = tuple[Callable[[], Any], "asyncio.Future[Any]"]
# The queue of the thread waiting in run(), seen by the coroutine it handed over.
_caller: contextvars.ContextVar[queue.SimpleQueue[_Work | None] | None] = contextvars.ContextVar(
    "mcp_bridge_caller", default=None
)
_loop: asyncio.AbstractEventLoop | None = None
_starting = threading.Lock()


def _event_loop() -> asyncio.AbstractEventLoop:
    global _loop  # noqa: PLW0603 - one loop per process, started on first use
    if _loop is None:
        with _starting:
            if _loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="mcp-loop", daemon=True).start()
                _loop = loop
    return _loop


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    """Called on the loop: give ``future`` its outcome unless its awaiter gave up."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of ``coroutine``, run on the process's event loop while this thread serves its work."""
    loop = _event_loop()
    work: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
    token = _caller.set(work)
    try:
        # The task starts in a copy of this context: it sees the queue (and the MCP principal).
        done = asyncio.run_coroutine_threadsafe(coroutine, loop)
    finally:
        _caller.reset(token)
    done.add_done_callback(lambda _: work.put(None))
    while (item := work.get()) is not None:
        function, future = item
        try:
            loop.call_soon_threadsafe(_settle, future, function(), None)
        except BaseException as error:  # handed to the awaiting coroutine, which decides
            loop.call_soon_threadsafe(_settle, future, None, error)
    return done.result()


async def on_calling_thread(function: Callable[[], T]) -> T:
    """``function()`` run on the thread that is waiting in :func:`run` (else through ``sync_to_async``)."""
    work = _caller.get()
    if work is None:
        return await sync_to_async(function)()
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    work.put((function, future))
    return await future
