"""Reads that run beside a request's own: a few threads of each process, each reading on a database
connection of its own, so that one request can wait on two statements at once.

A hybrid search's two retrievers are independent: its vector search can run while its keyword
search does (memories.search.pipeline). Each thread treats a read as a request does its
connection: taken from the process's pool (DATABASE_POOL_MAX counts the threads beside the web
threads) and handed back at its end, or kept until CONN_MAX_AGE without a pool. Should the pool be
without a connection to lend, the request reads itself (a reader that still finds none waits
DATABASE_CONNECT_TIMEOUT at most and fails). A read that fails gives its connection up (the next
opens another) and its error to the request, which reads on its own connection instead. A caller
inside a transaction reads on its own: another connection would not see what the transaction wrote.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from django.conf import settings
from django.db import DatabaseError, connections

T = TypeVar("T")
_lock = threading.Lock()
_readers: dict[int, ThreadPoolExecutor] = {}  # by process id: a forked child makes its own, on first use


def _executor() -> ThreadPoolExecutor | None:
    size = settings.DATABASE_READERS_BESIDE
    if size <= 0:
        return None
    with _lock:
        pid = os.getpid()
        if pid not in _readers:
            _readers.clear()  # a parent's threads do not survive the fork
            _readers[pid] = ThreadPoolExecutor(size, thread_name_prefix="read-beside")
        return _readers[pid]


def read_beside(using: str, read: Callable[[], T]) -> Future[T] | None:
    """``read`` on a thread of its own, on that thread's connection to ``using``; None when it cannot
    run beside the caller (turned off, the caller in a transaction, or no pooled connection to lend),
    for the caller to read itself. The caller's context (which database a search reads, the
    request's id) goes with it."""
    if connections[using].in_atomic_block or not _pool_has_room(using):
        return None
    executor = _executor()
    if executor is None:
        return None
    return executor.submit(contextvars.copy_context().run, _read, using, read)


def _pool_has_room(using: str) -> bool:
    """Whether the process's pool could lend a reader a connection now: one is idle, or the pool may
    open another. When every one is lent (more web threads than the pool holds, say), the caller
    reads itself rather than wait for one it may be keeping from others."""
    connection = connections[using]
    if not connection.settings_dict.get("OPTIONS", {}).get("pool"):
        return True
    stats = connection.pool.get_stats()  # type: ignore[attr-defined]  # the PostgreSQL backend's pool
    return bool(stats.get("pool_available", 0) > 0 or stats.get("pool_size", 0) < stats.get("pool_max", 0))


def _read(using: str, read: Callable[[], T]) -> T:
    connection = connections[using]
    try:
        return read()
    except DatabaseError:
        connection.close()  # broken or not, the next read starts on a new connection
        raise
    finally:
        # As at the end of a request: a pooled connection goes back to the pool (where borrowing it
        # again costs microseconds), a persistent one is kept until CONN_MAX_AGE.
        connection.close_if_unusable_or_obsolete()
