"""Requests borrow database connections from a pool instead of opening one each.

Without the pool a web process's threads would each hold a connection of their own (and under
ASGI, where each request ran in a thread of its own, every request started a PostgreSQL backend:
about 10 ms before any work).
"""

from __future__ import annotations

import time

import httpx
import pytest
from django.db import connection


def sessions_opened() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_twenty_requests_open_no_new_database_sessions(mcp_server: str) -> None:
    with httpx.Client(base_url=mcp_server) as client:
        assert client.get("/healthz").status_code == 200  # the pool is open from here on
        before = sessions_opened()
        for _ in range(20):
            assert client.get("/healthz").status_code == 200
    time.sleep(0.5)  # session counters are flushed by the backends asynchronously
    assert sessions_opened() - before <= 1  # at most one more pooled connection
