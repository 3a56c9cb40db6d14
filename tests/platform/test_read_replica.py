"""Searches read a real streaming replica (DATABASE_REPLICA_URL) when it may answer, and the primary
when it may not: a primary and a hot standby of it from the embedded PostgreSQL's binaries, over
TCP, and two web processes sharing the write positions through Redis.

What reads where is told by a change made on the primary behind the platform's back (a memory
retired by SQL, so no write position is recorded) while the replica's replay is paused: a search
that still finds the memory read the replica, one that does not read the primary.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import redis
from django.conf import settings

from memory_platform import embedded_db
from tests.live_server import free_port, start_server, stop
from tests.mcp.http import bearer

pytestmark = pytest.mark.processes

REDIS = "redis://127.0.0.1:6379/12"
MAX_LAG = 6  # seconds: room for a slow machine between a replayed write and the searches after it


@dataclass
class Platform:
    base_url: str
    primary: str  # libpq URLs of the two servers, to act behind the platform's back
    replica: str
    tokens: dict[str, str]
    replica_dir: Path
    replica_port: int

    def client(self, organization: str) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers=bearer(self.tokens[organization]), timeout=30)

    def replica_sql(self, sql: str) -> Any:
        with psycopg.connect(self.replica, autocommit=True) as connection:
            return connection.execute(sql).fetchone()

    def caught_up(self) -> None:
        """Wait until the replica has replayed everything the primary has written so far."""
        with psycopg.connect(self.primary, autocommit=True) as connection:
            (position,) = connection.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        deadline = time.monotonic() + 30
        while not self.replica_sql(f"SELECT pg_last_wal_replay_lsn() >= '{position}'::pg_lsn")[0]:
            assert time.monotonic() < deadline, "the replica did not catch up within 30 s"
            time.sleep(0.05)


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True,
        check=False, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory, server_env: dict[str, str]) -> Iterator[Platform]:
    root = tmp_path_factory.mktemp("replica")
    primary = embedded_db.ensure_running(root / "primary", tcp_port=free_port())
    replica_dir = root / "replica"
    server: subprocess.Popen[bytes] | None = None
    try:
        primary_url = f"postgresql://postgres@127.0.0.1:{primary.port}/memory_platform"
        env = {**server_env, "DATABASE_URL": primary_url}
        _manage(env, "migrate", "--no-input")
        replica = embedded_db.start_replica(primary, replica_dir, tcp_port=free_port())
        replica_url = f"postgresql://postgres@127.0.0.1:{replica.port}/memory_platform"
        tokens = {
            slug: json.loads(_manage(env, "create_organization", slug, "--token-role", "agent", "--json"))["token"]
            for slug in ("writer", "reader")
        }
        redis.Redis.from_url(REDIS).flushdb()
        env |= {
            "DATABASE_REPLICA_URL": replica_url,
            "REPLICA_MAX_LAG_SECONDS": str(MAX_LAG),
            "REPLICA_RETRY_SECONDS": "1",
            "REDIS_URL": REDIS,
            "API_THROTTLE_RATE": "",
        }
        server, base_url = start_server(env, root / "server.log", workers=2)
        yield Platform(base_url, primary_url, replica_url, tokens, replica_dir, replica.port)
    finally:
        if server is not None:
            stop(server)
        embedded_db.stop(replica_dir)
        embedded_db.stop(root / "primary")


def _write(client: httpx.Client, content: str) -> str:
    response = client.post("/api/v1/memories/", json={"scope_type": "organization", "memory_type": "fact",
                                                      "current_content": content})  # fmt: skip
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _found(client: httpx.Client, query: str) -> list[str]:
    response = client.post("/api/v1/memories/search/", json={"query": query, "mode": "keyword", "min_score": 0})
    assert response.status_code == 200, response.text
    return [hit["id"] for hit in response.json()["results"]]


def _retire_behind_the_platform(platform: Platform, memory_id: str) -> None:
    with psycopg.connect(platform.primary, autocommit=True) as connection:
        connection.execute("UPDATE memories_memory SET deleted_at = now() WHERE id = %s", [memory_id])


def test_searches_read_the_replica_unless_it_lacks_what_they_need(platform: Platform) -> None:
    with platform.client("reader") as reader, platform.client("writer") as writer:
        kept = _write(reader, "The quarterly zephyrine audit goes to the finance team.")
        retired = _write(reader, "The zephyrine ledger is closed every Friday.")
        platform.caught_up()
        assert platform.replica_sql("SELECT pg_is_in_recovery()")[0]
        assert set(_found(reader, "zephyrine")) == {kept, retired}

        platform.replica_sql("SELECT pg_wal_replay_pause()")
        try:
            _retire_behind_the_platform(platform, retired)
            # The replica has not replayed it, and is not behind by more than MAX_LAG: it answers.
            assert set(_found(reader, "zephyrine")) == {kept, retired}, "the search did not read the replica"

            # Another organization writes while the replica stands still: its own searches find what
            # it wrote (whichever web process answers), so they read the primary...
            written = _write(writer, "Invoices in the quokkanite region are issued in CHF.")
            for _ in range(4):
                assert _found(writer, "quokkanite") == [written]
            # ... while the replica was still within MAX_LAG, and answered the other organization.
            assert set(_found(reader, "zephyrine")) == {kept, retired}, "the replica fell behind too early"

            # Past MAX_LAG behind, it answers no one.
            time.sleep(MAX_LAG + 1)
            assert _found(reader, "zephyrine") == [kept]
            health = httpx.get(f"{platform.base_url}/healthz", timeout=10).json()
            assert health["replica"]["state"] == "lagging" and health["replica"]["lag_seconds"] > MAX_LAG
        finally:
            platform.replica_sql("SELECT pg_wal_replay_resume()")

        platform.caught_up()
        assert httpx.get(f"{platform.base_url}/healthz", timeout=10).json()["replica"]["state"] == "ok"


def test_searches_answer_from_the_primary_while_the_replica_is_down(platform: Platform) -> None:
    with platform.client("reader") as reader:
        memory = _write(reader, "The pelagornis runbook lives in the wiki.")
        embedded_db.stop(platform.replica_dir)
        try:
            for _ in range(4):  # both web processes, each finding out for itself
                assert _found(reader, "pelagornis") == [memory]
            health = httpx.get(f"{platform.base_url}/healthz", timeout=10)
            assert health.status_code == 200 and health.json()["replica"]["state"] == "down", health.text
        finally:
            embedded_db.ensure_running(platform.replica_dir, tcp_port=platform.replica_port)
        platform.caught_up()
        assert _found(reader, "pelagornis") == [memory]
