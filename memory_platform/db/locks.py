"""Advisory locks: one worker at a time on something (an organization's consolidation, a code index)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def advisory_lock(namespace: int, key: int) -> Iterator[bool]:
    """Try a session advisory lock on (``namespace``, ``key``) and yield whether it was taken: held
    across the caller's many transactions, released at the end, or by the server if the process dies.
    Each kind of work uses its own namespace, an arbitrary constant."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [namespace, key])
        acquired = bool(cursor.fetchone()[0])
    try:
        yield acquired
    finally:
        if acquired:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [namespace, key])
