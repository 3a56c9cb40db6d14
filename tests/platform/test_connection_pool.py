"""Requests borrow database connections from a pool instead of opening one each.

Without the pool a web process's threads would each hold a connection of their own (and under
ASGI, where each request ran in a thread of its own, every request started a PostgreSQL backend:
about 10 ms before any work).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from django.conf import settings
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


@pytest.mark.django_db(transaction=True)
def test_a_process_on_database_url_has_the_search_settings_and_starts_no_embedded_server(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    # An empty data directory: had the process tried to start an embedded server, it would be here.
    env = {**server_env, "MEMORY_PLATFORM_DATA_DIR": str(tmp_path / "data")}
    script = (
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        "    c.execute(\"SELECT current_setting('hnsw.iterative_scan'), current_setting('hnsw.ef_search')\")\n"
        "    print(*c.fetchone())\n"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines()[-1].split() == ["relaxed_order", str(settings.SEARCH_HNSW_EF_SEARCH)]
    assert not (tmp_path / "data" / "postgres").exists()


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


@pytest.fixture
def terminate(settings: Any) -> Iterator[Callable[[int], None]]:
    """Ends a database backend as an administrator would; afterwards, the pool checks every idle
    connection (no window) and drops the dead ones, so that no later test borrows one."""
    yield _terminate
    settings.DATABASE_POOL_CHECK_AFTER_MS = 0
    assert connection.pool is not None
    connection.pool.check()


def _terminate(pid: int) -> None:
    db = connection.settings_dict
    params = {"dbname": db["NAME"], "user": db["USER"], "host": db["HOST"], "port": db["PORT"]}
    with psycopg.connect(**{k: v for k, v in params.items() if v}, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 5
        while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, "the backend did not end"
            time.sleep(0.02)


def test_the_pool_checks_connections_with_the_platforms_check() -> None:
    from memory_platform.db.base import check_unless_just_used

    assert connection.pool is not None
    assert connection.pool._check is check_unless_just_used


@pytest.mark.django_db(transaction=True)
def test_a_connection_given_back_just_now_is_lent_without_a_round_trip(
    settings: Any, terminate: Callable[[int], None]
) -> None:
    from memory_platform.db.base import check_unless_just_used

    settings.DATABASE_POOL_CHECK_AFTER_MS = 60_000
    pid = _backend_pid()
    raw = connection.connection
    connection.close()  # back to the pool, stamped
    terminate(pid)
    check_unless_just_used(raw)  # no round trip: it would have failed on the dead backend

    settings.DATABASE_POOL_CHECK_AFTER_MS = 0
    with pytest.raises(psycopg.OperationalError):
        check_unless_just_used(raw)  # checked: the server is gone


@pytest.mark.django_db(transaction=True)
def test_a_connection_that_died_while_idle_in_the_pool_is_replaced(
    settings: Any, terminate: Callable[[int], None]
) -> None:
    settings.DATABASE_POOL_CHECK_AFTER_MS = 50
    pid = _backend_pid()
    connection.close()
    terminate(pid)
    time.sleep(0.1)  # idle past the window: checked before it is lent again
    assert _backend_pid() != pid  # a new connection, and the statement ran
