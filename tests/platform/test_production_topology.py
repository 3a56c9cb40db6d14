"""The production topology of docker-compose.yml, run without Docker (tests/topology.py): PostgreSQL
over TCP, Redis, two web replicas behind nginx with deploy/nginx.conf, two Celery workers and beat.

Through nginx: MCP, REST and the admin answer. Agents write over REST and MCP while one web replica
is killed (SIGKILL to it and its web processes) and started again: every write the platform
acknowledged is there afterwards, read back through nginx. A worker is killed in the middle of a
code-index run: the other worker takes the task up again and finishes the run. A backup of the
database server restores into an empty database. /metrics, asked through nginx, adds up both
replicas and the workers. Timings go to test-artifacts/topology.json.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.artifacts import record
from tests.code_index.conftest import python_module, write_tree
from tests.conftest import on_ci
from tests.mcp.http import bearer, body
from tests.topology import METRICS_TOKEN, Topology, nginx_binary

pytestmark = pytest.mark.processes

WRITERS = 4
WRITE_SECONDS = 18.0
FILES = 200  # eight batches of 25: a worker is mid-run long enough to be killed there
ADMIN_PASSWORD = "topology-admin-password"


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory, django_db_setup: None) -> Iterator[Topology]:
    """The topology, started on this run's migrated schema (django_db_setup makes its template)."""
    if nginx_binary() is None:
        reason = "nginx is not installed (make system-packages installs it)"
        if on_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    running = Topology(tmp_path_factory.mktemp("topology"))
    try:
        running.start()
    except BaseException:
        print(running.logs())
        running.stop()
        raise
    yield running
    running.stop()


@pytest.fixture(scope="module")
def token(topology: Topology) -> str:
    """An organization's admin token and an admin login, made as the compose file's comments say."""
    topology.manage("createsuperuser", "--no-input", "--username", "operator", "--email", "ops@example.com",
                    DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD)  # fmt: skip
    made = json.loads(topology.manage("create_organization", "acme", "--token-role", "admin", "--json"))
    return str(made["token"])


def _client(topology: Topology, token: str) -> httpx.Client:
    return httpx.Client(base_url=topology.base_url, headers=bearer(token), timeout=60)


def _tool(client: httpx.Client, name: str, arguments: dict[str, Any]) -> Any:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = client.post("/mcp", json=call)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    assert not result.get("isError"), result
    return _content(result)


def _content(result: dict[str, Any]) -> Any:
    """A tool result's JSON (its text content)."""
    return json.loads(result["content"][0]["text"])


def test_mcp_rest_and_the_admin_answer_through_the_balancer(topology: Topology, token: str) -> None:
    with _client(topology, token) as client:
        assert client.post("/mcp", content=body()).json()["result"]["serverInfo"]["name"]
        written = _tool(client, "memory-write", {"scope_type": "organization", "memory_type": "business_rule",
                        "current_content": "Refunds above 500 EUR need a second approver."})  # fmt: skip
        created = client.post("/api/v1/memories/", json={"scope_type": "organization", "memory_type": "decision_log",
                              "current_content": "The payments service is deployed on Tuesdays only."})  # fmt: skip
        assert created.status_code == 201, created.text
        found = _tool(client, "memory-search", {"query": "who approves large refunds", "limit": 3})
        assert found[0]["id"] == written["id"]
        read = client.get(f"/api/v1/memories/{created.json()['id']}/").json()
        assert read["current_content"].startswith("The payments")

    with httpx.Client(base_url=topology.base_url, timeout=60, follow_redirects=False) as browser:
        form = browser.get("/admin/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        assert form.status_code == 200 and csrf, form.text[:500]
        login = browser.post("/admin/login/?next=/admin/", data={
            "csrfmiddlewaretoken": csrf.group(1), "username": "operator", "password": ADMIN_PASSWORD},
            headers={"Referer": f"{topology.base_url}/admin/login/"})  # fmt: skip
        assert login.status_code == 302 and login.headers["location"] == "/admin/", login.text[:500]
        listing = browser.get("/admin/memories/memory/")
        assert listing.status_code == 200 and "Refunds above 500 EUR" in listing.text


def test_no_acknowledged_write_is_lost_when_a_web_replica_dies(topology: Topology, token: str) -> None:
    acknowledged: dict[str, str] = {}
    failed: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + WRITE_SECONDS

    def write(writer: int) -> None:
        number = 0
        with _client(topology, token) as client:
            while time.monotonic() < deadline:
                number += 1
                content = f"Topology note {writer}-{number}: the release train leaves at {number % 24}:00."
                fields = {"scope_type": "organization", "memory_type": "fact", "current_content": content}
                try:
                    if number % 2:
                        response = client.post("/api/v1/memories/", json=fields)
                        memory_id = response.json()["id"] if response.status_code == 201 else None
                    else:
                        call = {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                                "params": {"name": "memory-write", "arguments": fields}}  # fmt: skip
                        response = client.post("/mcp", json=call)
                        result = response.json().get("result", {}) if response.status_code == 200 else {}
                        memory_id = None if result.get("isError", True) else _content(result).get("id")
                except httpx.TransportError as error:
                    memory_id, response = None, None
                    with lock:
                        failed.append(f"{content}: {type(error).__name__}")
                with lock:
                    if memory_id:
                        acknowledged[memory_id] = content
                    elif response is not None:
                        failed.append(f"{content}: {response.status_code} {response.text[:200]}")

    threads = [threading.Thread(target=write, args=(writer,)) for writer in range(WRITERS)]
    for thread in threads:
        thread.start()
    time.sleep(WRITE_SECONDS / 3)
    replica = topology.services["web-1"]
    replica.kill()
    killed_at = time.monotonic()
    time.sleep(WRITE_SECONDS / 6)
    replica.start()  # restart: unless-stopped
    topology.wait_healthy("web-1", f"http://127.0.0.1:{topology.web_ports[0]}")
    back_after = time.monotonic() - killed_at
    for thread in threads:
        thread.join()

    with _client(topology, token) as client:
        missing = {
            memory_id: content
            for memory_id, content in acknowledged.items()
            if client.get(f"/api/v1/memories/{memory_id}/").json().get("current_content") != content
        }
    record("topology", "web replica killed", {
        "start seconds": topology.timings, "writes acknowledged": len(acknowledged), "writes failed": len(failed),
        "replica back after seconds": round(back_after, 1)})  # fmt: skip
    assert len(acknowledged) >= 50, f"the writers got little through: {failed[:5]}\n{topology.logs()}"
    assert not missing, f"{len(missing)} acknowledged writes are gone: {list(missing.items())[:3]}"
    # Only the requests in flight on the replica when it died may fail (one per writer, and as many again
    # sent on a connection nginx had kept open to it): nginx sends the rest to the other replica.
    assert len(failed) <= 2 * WRITERS, failed[:10]


def test_a_task_a_killed_worker_held_is_finished_by_the_other(topology: Topology, token: str) -> None:
    tree = write_tree(topology.root / "code" / "billing", {
        f"billing/module_{n:03}.py": python_module(f"module_{n}") for n in range(FILES)})  # fmt: skip
    with _client(topology, token) as client:
        assert client.post("/api/v1/repositories/", json={"slug": "billing", "name": "Billing"}).status_code == 201
        started = client.post("/api/v1/code/repositories/billing/index/", json={"path": str(tree)})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]

        def last_run() -> dict[str, Any]:
            run: dict[str, Any] = client.get("/api/v1/code/repositories/billing/").json()["last_run"]
            assert run["id"] == run_id
            return run

        holder = _worker_running(topology, "code_index.tasks.code_index_run")
        topology.wait_until(holder, lambda: last_run()["indexed_files"] > 0, "index a first batch", timeout=120)
        taken = last_run()
        assert taken["status"] == "indexing", "the run ended before the worker could be killed"
        topology.services[holder].kill()
        killed_at = time.monotonic()

        topology.wait_until("beat", lambda: last_run()["status"] != "indexing", "see the run finish", timeout=180)
        finished = last_run()
        recovered_after = time.monotonic() - killed_at
        status = client.get("/api/v1/code/repositories/billing/").json()

    record("topology", "worker killed", {"files indexed when killed": taken["indexed_files"],
           "run finished seconds after the kill": round(recovered_after, 1),
           "taken up again by": "beat's sweep" if finished["resumed"] else "the broker's redelivery"})  # fmt: skip
    assert finished["status"] == "completed", finished
    assert status["total_files"] == FILES and finished["indexed_files"] == FILES
    survivor = next(name for name in ("worker-1", "worker-2") if name != holder)
    assert "code_index.tasks.code_index_run[" in _log(topology, survivor), "the other worker finished it"


def test_a_backup_of_the_database_server_restores_into_an_empty_database(topology: Topology, token: str) -> None:
    """`manage.py backup` and `restore` against the PostgreSQL server over TCP with its password."""
    backup = topology.root / "memory.dump"
    topology.manage("backup", "--output", str(backup))
    with psycopg.connect(topology.database_url, autocommit=True) as admin:
        admin.execute("CREATE DATABASE restored")
        held = admin.execute("SELECT count(*) FROM memories_memory").fetchone()
    restored_url = topology.database_url.rsplit("/", 1)[0] + "/restored"

    said = topology.manage("restore", str(backup), DATABASE_URL=restored_url)

    assert held is not None and held[0] > 0
    assert f"{held[0]} memories" in said
    with psycopg.connect(restored_url) as restored:
        assert restored.execute("SELECT count(*) FROM memories_memory").fetchone() == held


def test_metrics_through_the_balancer_add_up_both_replicas_and_the_workers(topology: Topology) -> None:
    response = httpx.get(f"{topology.base_url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert response.status_code == 200, response.text
    samples = [sample for family in text_string_to_metric_families(response.text) for sample in family.samples]
    tasks = {s.labels["task"]: s.value for s in samples if s.name == "memory_platform_task_seconds_count"}
    assert tasks.get("memory_platform.tasks.worker_heartbeat", 0) > 0, tasks
    writers = {path.stem.rsplit("_", 1)[-1] for path in (topology.data_dir / "run" / "metrics").glob("counter_*.db")}
    assert len(writers) >= 4, f"both replicas and both workers count: {sorted(writers)}"


def _log(topology: Topology, name: str) -> str:
    return topology.services[name].log.read_text(errors="replace")


def _worker_running(topology: Topology, task: str) -> str:
    """The worker that received ``task``."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for name in ("worker-1", "worker-2"):
            if f"{task}[" in _log(topology, name):
                return name
        time.sleep(0.05)
    raise AssertionError(f"no worker received {task}:\n{topology.logs()}")
