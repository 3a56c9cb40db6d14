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
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import redis

from memory_platform import embedded_db
from tests.code_index.conftest import python_module, write_tree
from tests.databases import load_migrated_schema
from tests.live_server import free_port, manage, start_server, stop
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
    env: dict[str, str]  # the web processes', for commands run beside them
    log: Path  # the web processes' log

    def client(self, organization: str) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers=bearer(self.tokens[organization]), timeout=30)

    def replica_sql(self, sql: str) -> Any:
        with psycopg.connect(self.replica, autocommit=True) as connection:
            return connection.execute(sql).fetchone()

    def pause_replay(self) -> None:
        """Stop the replica's replay right after a commit it has replayed: its lag counts from now."""
        self.commit_replayed()
        self.replica_sql("SELECT pg_wal_replay_pause()")

    def commit_replayed(self) -> None:
        """A commit on the primary, once the replica has replayed it. The replica's lag counts from its
        last replayed commit whenever it has received more than it replayed (a checkpoint's record
        will do): only a fresh commit makes "caught up" mean "not behind"."""
        with psycopg.connect(self.primary, autocommit=True) as connection:
            connection.execute("SELECT pg_current_xact_id()")  # a transaction with a commit record
        self.caught_up()

    def behind_the_platform(self, sql: str, *params: Any) -> None:
        """A change on the primary that no write of the platform's records: only what reads the primary sees it."""
        with psycopg.connect(self.primary, autocommit=True) as connection:
            connection.execute(sql, params)

    def replica_waits_for(self, sql: str, what: str) -> Any:
        """The first row ``sql`` finds on the replica, once it finds one (within 30 s)."""
        deadline = time.monotonic() + 30
        while (row := self.replica_sql(sql)) is None:
            assert time.monotonic() < deadline, f"{what} within 30 s"
            time.sleep(0.05)
        return row

    def caught_up(self) -> None:
        """Wait until the replica has replayed everything the primary has written so far."""
        with psycopg.connect(self.primary, autocommit=True) as connection:
            (position,) = connection.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        deadline = time.monotonic() + 30
        while not self.replica_sql(f"SELECT pg_last_wal_replay_lsn() >= '{position}'::pg_lsn")[0]:
            assert time.monotonic() < deadline, "the replica did not catch up within 30 s"
            time.sleep(0.05)


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory, server_env: dict[str, str]) -> Iterator[Platform]:
    root = tmp_path_factory.mktemp("replica")
    primary = embedded_db.ensure_running(root / "primary", tcp_port=free_port())
    replica_dir = root / "replica"
    server: subprocess.Popen[bytes] | None = None
    try:
        primary_url = f"postgresql://postgres@127.0.0.1:{primary.port}/memory_platform"
        env = {**server_env, "DATABASE_URL": primary_url}
        load_migrated_schema(primary_url, root)  # migrate then finds nothing to apply
        manage(env, "migrate", "--no-input")
        replica = embedded_db.start_replica(primary, replica_dir, tcp_port=free_port())
        replica_url = f"postgresql://postgres@127.0.0.1:{replica.port}/memory_platform"
        tokens = {
            slug: json.loads(manage(env, "create_organization", slug, "--token-role", "admin", "--json"))["token"]
            for slug in ("writer", "reader")  # admins: they may add repositories
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
        log = root / "server.log"
        yield Platform(base_url, primary_url, replica_url, tokens, replica_dir, replica.port, env, log)
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


def test_searches_read_the_replica_unless_it_lacks_what_they_need(platform: Platform) -> None:
    with platform.client("reader") as reader, platform.client("writer") as writer:
        kept = _write(reader, "The quarterly zephyrine audit goes to the finance team.")
        retired = _write(reader, "The zephyrine ledger is closed every Friday.")
        platform.caught_up()
        assert platform.replica_sql("SELECT pg_is_in_recovery()")[0]
        assert set(_found(reader, "zephyrine")) == {kept, retired}

        platform.pause_replay()
        try:
            platform.behind_the_platform("UPDATE memories_memory SET deleted_at = now() WHERE id = %s", retired)
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

        platform.commit_replayed()
        assert httpx.get(f"{platform.base_url}/healthz", timeout=10).json()["replica"]["state"] == "ok"


def test_a_search_the_replica_fails_under_is_answered_by_the_primary(platform: Platform) -> None:
    """The replica's connection ends while a search runs there: the primary answers the search, and
    the caller never knows. (Run before the replica is restarted below: a web process whose replica
    connection that restart broke sends its next search to the primary from the start.)"""
    with platform.client("reader") as reader:
        memory = _write(reader, "The ornithopter checklist is signed by two people.")
        with psycopg.connect(platform.primary) as holder:
            # A lock on the memories, taken on the primary and replayed on the replica: a search there
            # waits behind it, so it is cut off at a moment the test chooses.
            holder.execute("LOCK TABLE memories_memory IN ACCESS EXCLUSIVE MODE")
            platform.behind_the_platform("SELECT pg_current_xact_id()")  # a commit: the lock's record is sent
            platform.replica_waits_for(
                "SELECT 1 FROM pg_locks WHERE relation = 'memories_memory'::regclass AND mode = 'AccessExclusiveLock'"
                " AND granted",
                "the replica did not replay the lock",
            )
            answer: dict[str, Any] = {}
            search = threading.Thread(target=lambda: answer.update(found=_found(reader, "ornithopter")))
            search.start()
            (waiting,) = platform.replica_waits_for(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND backend_type = 'client backend'",
                "no search waited on the replica",
            )
            platform.replica_sql(f"SELECT pg_terminate_backend({waiting})")
            holder.rollback()  # the search went on to the primary, or will: the lock holds it no more
            search.join(timeout=30)

    assert answer.get("found") == [memory]
    assert "the read replica failed" in platform.log.read_text(), "the search never met the replica's failure"


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


def _code_paths(client: httpx.Client, query: str) -> list[str]:
    response = client.post("/api/v1/code/search/", json={"query": query, "mode": "keyword", "min_score": 0})
    assert response.status_code == 200, response.text
    return [hit["file_path"] for hit in response.json()["results"]]


def test_code_search_reads_the_replica_too(platform: Platform, tmp_path: Path) -> None:
    files = {"billing/ledger.py": python_module("reconcile_ledger"), "billing/refund.py": python_module("issue_refund")}
    tree = write_tree(tmp_path / "billing", files)
    with platform.client("reader") as reader:
        assert reader.post("/api/v1/repositories/", json={"slug": "billing", "name": "Billing"}).status_code == 201
        manage(platform.env, "code_index", "billing", str(tree), "--organization", "reader")
        assert _code_paths(reader, "issue_refund")[:1] == ["billing/refund.py"]

        platform.pause_replay()
        try:
            platform.behind_the_platform("DELETE FROM code_index_codechunk WHERE path = %s", "billing/refund.py")
            assert _code_paths(reader, "issue_refund")[:1] == ["billing/refund.py"], (
                "the search did not read the replica"
            )
        finally:
            platform.replica_sql("SELECT pg_wal_replay_resume()")
        platform.caught_up()
        assert "billing/refund.py" not in _code_paths(reader, "issue_refund")
