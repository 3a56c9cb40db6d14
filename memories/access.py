"""Access tracking (last accessed, how often) without a write per read.

Reads add ids to an in-process tally; the tally is written as one UPDATE at most every few
seconds (or when it grows large, or at exit). Counts from a process that dies are lost, which is
acceptable for a popularity signal.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.utils import timezone

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
    if due:
        flush_access()


def flush_access() -> int:
    """Write the tally: one statement for all memories read since the last flush."""
    global _last_flush  # noqa: PLW0603 - the tally is process state by design
    with _lock:
        batch = dict(_pending)
        _pending.clear()
        _last_flush = time.monotonic()
    if not batch:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memory AS m SET access_count = m.access_count + c.n, last_accessed_at = %s "
            "FROM unnest(%s::uuid[], %s::int[]) AS c(id, n) WHERE m.id = c.id",
            [timezone.now(), list(batch), list(batch.values())],
        )
    return len(batch)


def _flush_at_exit() -> None:
    with contextlib.suppress(Exception):  # the database may already be gone at exit
        flush_access()


atexit.register(_flush_at_exit)
