"""Requests borrow database connections from a pool instead of opening one each.

Without the pool a web process's threads would each hold a connection of their own (and under
ASGI, where each request ran in a thread of its own, every request started a PostgreSQL backend:
about 10 ms before any work).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
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
