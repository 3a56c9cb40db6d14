"""Access tracking (last accessed, how often) without a write per read.

Reads add ids to an in-process tally; the tally is written as one upsert into the narrow
``memories_memoryaccess`` table at most every few seconds (or when it grows large, or at exit).
Not into the memory's own row: that update re-inserted each row into every index of
memories_memory, the HNSW graph among them, and stalled the search that happened to flush for
up to a second. Counts from a process that dies are lost, which is acceptable for a popularity
signal; so are those of a flush the database refuses (logged).

A flush that falls due is written by a thread of the process's own (``memory-access-flush``, on a
connection of its own, outside any request's transaction), not by the read that made it due: one
upsert of a thousand memories costs that read 13-27 ms at 100k memories, a search's p99.
``MEMORY_ACCESS_FLUSH_IN_BACKGROUND=false`` (the tests) flushes on the reading thread instead.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from memory_platform.db.transactions import savepoint_if_in_transaction

logger = logging.getLogger(__name__)

FLUSH_INTERVAL_SECONDS = 10.0
FLUSH_SIZE = 1000

_lock = threading.Lock()
_pending: Counter[str] = Counter()
_last_flush = time.monotonic()


def record_access(memory_ids: Iterable[Any]) -> None:
    ids = [str(memory_id) for memory_id in memory_ids]
    if not ids:
        return
    with _lock:
        _pending.update(ids)
        due = len(_pending) >= FLUSH_SIZE or time.monotonic() - _last_flush >= FLUSH_INTERVAL_SECONDS
    if not due:
        return
    if settings.MEMORY_ACCESS_FLUSH_IN_BACKGROUND:
        _flusher.wake()
    else:
        flush_access()


class _Flusher:
    """The thread that writes a tally that fell due, started on first need in each process (a
    forked child starts its own: threads do not survive a fork)."""

    def __init__(self) -> None:
        self._due = threading.Event()
        self._pid = 0
        self._starting = threading.Lock()

    def wake(self) -> None:
        if self._pid != os.getpid():
            with self._starting:
                if self._pid != os.getpid():
                    self._due = threading.Event()
                    thread = threading.Thread(target=self._run, args=(self._due,), name="memory-access-flush")
                    thread.daemon = True  # the tally left at exit is written by _flush_at_exit
                    thread.start()
                    self._pid = os.getpid()
        self._due.set()

    @staticmethod
    def _run(due: threading.Event) -> None:
        while True:
            due.wait()
            due.clear()
            try:
                flush_access()
            except Exception:  # the thread must outlive any one flush, or the tally grows unwritten
                logger.exception("the access tally could not be written")
            finally:
                connection.close()  # this thread's own: back to the pool, or closed


_flusher = _Flusher()


def flush_access(*, log_errors: bool = True) -> int:
    """Write the tally: one statement for all memories read since the last flush. Returns how many
    memories it counted (0 when the database refused it)."""
    global _last_flush  # noqa: PLW0603 - the tally is process state by design
    with _lock:
        batch = dict(_pending)
        _pending.clear()
        _last_flush = time.monotonic()
    if not batch:
        return 0
    ids = sorted(batch)  # one lock order for every process flushing at once
    try:
        # In a caller's transaction, a savepoint: a refused flush must not abort the caller's work.
        with savepoint_if_in_transaction(), connection.cursor() as cursor:
            cursor.execute(_UPSERT, [timezone.now(), ids, [batch[i] for i in ids]])
    except DatabaseError:
        if log_errors:
            logger.exception("access counts of %d memories were not recorded", len(batch))
        return 0
    return len(batch)


# Memories gone since they were read (or not visible yet to this connection) are skipped. The
# conflict is named by the primary key's name, which holds whether the key is (memory_id) or, since
# memories 0016, (memory_id, organization_id): code of either release runs on either schema.
_UPSERT = """
INSERT INTO memories_memoryaccess AS a (organization_id, memory_id, access_count, last_accessed_at)
SELECT m.organization_id, c.id, c.n, %s FROM unnest(%s::uuid[], %s::int[]) AS c(id, n)
JOIN memories_memory AS m ON m.id = c.id
ORDER BY c.id
ON CONFLICT ON CONSTRAINT memories_memoryaccess_pkey DO UPDATE SET
    access_count = a.access_count + EXCLUDED.access_count,
    last_accessed_at = greatest(a.last_accessed_at, EXCLUDED.last_accessed_at)
"""


def _flush_at_exit() -> None:
    with contextlib.suppress(Exception):  # the database may already be gone at exit
        flush_access(log_errors=False)


atexit.register(_flush_at_exit)
