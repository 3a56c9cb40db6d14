"""More than one of everything: two web processes and two Celery workers against one PostgreSQL and
the real Redis (127.0.0.1:6379), as an organization that outgrows one process deploys them.

Clients drive the two web processes (each on its own port, as behind a balancer) at the same time:
an idempotency key still makes one memory, concurrent kg-asserts still leave one current fact, the
rate limit counts a token once across both processes (REST and MCP together), consolidation runs
sent to both workers never overlap, and killing one web process in the middle of a stream of writes
loses none that it acknowledged.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis

from knowledge.models import Triple
from lifecycle.models import LifecycleRun, RunStatus
from memories.models import Memory
from memory_platform.celery import app
from tests.conftest import Tenant, database_url_of_the_test_database
from tests.live_server import start_server, stop
from tests.redis_workers import REDIS_URL, drop_queue, private_queue, workers
from tests.worker.conftest import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

RATE = 60  # requests an hour per token, across every process (a window no test run straddles but by chance)
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@dataclass
class Cluster:
    web: list[subprocess.Popen[bytes]]
    urls: list[str]
    queue: str


@pytest.fixture(scope="module")
def cluster(django_db_setup: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    queue = private_queue("test-scale-out")
    logs = tmp_path_factory.mktemp("scale-out")
    shared = {
        "REDIS_URL": REDIS_URL,  # the broker and the cache every process shares
        "API_THROTTLE_RATE": f"{RATE}/hour",
        "CONSOLIDATION_AUTO_MERGE_SHARE": "1",
    }
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_DIR", "MEMORY_PLATFORM_TOKEN")}
    env.update(
        DATABASE_URL=database_url_of_the_test_database(),
        CELERY_QUEUE=queue,
        PYTHONUNBUFFERED="1",
        LOG_LEVEL="WARNING",
        **shared,
    )
    worker_pool = workers(queue, logs, **{k: v for k, v in shared.items() if k != "REDIS_URL"})
    start_worker = next(worker_pool)
    web: list[subprocess.Popen[bytes]] = []
    try:
        start_worker("one")
        start_worker("two")
        urls = []
        for name in ("web-a", "web-b"):
            process, url = start_server(env, logs / f"{name}.log")
            web.append(process)
            urls.append(url)
        yield Cluster(web=web, urls=urls, queue=queue)
    finally:
        for process in web:
            stop(process)
        next(worker_pool, None)  # kills the workers
        drop_queue(queue)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _both(cluster: Cluster, count: int, call: Callable[[str, int], httpx.Response]) -> list[httpx.Response]:
    """``call(base_url, i)`` for i in range(count), alternating the processes, all at once."""
    barrier = threading.Barrier(count)

    def one(i: int) -> httpx.Response:
        barrier.wait()
        return call(cluster.urls[i % 2], i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def test_an_idempotency_key_makes_one_memory_across_processes(acme: Tenant, cluster: Cluster) -> None:
    content = "Deploys need two approvals."
    body = {"scope_type": "organization", "memory_type": "business_rule", "current_content": content}
    headers = {**_bearer(acme.raw_tokens["agent"]), "Idempotency-Key": "two-approvals"}

    responses = _both(
        cluster, 8, lambda url, _: httpx.post(f"{url}/api/v1/memories/", json=body, headers=headers, timeout=60)
    )

    assert sorted(r.status_code for r in responses) == [200] * 7 + [201], [r.text for r in responses]
    assert len({r.json()["id"] for r in responses}) == 1
    assert Memory.objects.filter(organization=acme.organization).count() == 1


def test_concurrent_kg_asserts_leave_one_current_fact(acme: Tenant, cluster: Cluster) -> None:
    headers = _bearer(acme.raw_tokens["agent"])

    def assert_owner(url: str, i: int) -> httpx.Response:
        fact = {"subject": "billing-service", "predicate": "owned_by", "object": f"team-{i}"}
        return httpx.post(f"{url}/api/v1/triples/", json=fact, headers=headers, timeout=60)

    responses = _both(cluster, 8, assert_owner)

    assert {r.status_code for r in responses} == {201}, [r.text for r in responses]
    # What is believed now (rows not expired): each owner for a period, one after the other, and
    # one of them the owner today. Nothing lost, nothing doubled, no two owners at once.
    believed = Triple.objects.filter(organization=acme.organization, predicate="owned_by", expired_at__isnull=True)
    assert sorted(believed.values_list("object__name", flat=True)) == sorted(f"team-{i}" for i in range(8))
    assert believed.filter(valid_to__isnull=True).count() == 1
    periods = sorted(believed.values_list("valid_from", "valid_to"), key=lambda period: period[0])
    for (_, ends), (starts, _) in itertools.pairwise(periods):
        assert ends is not None and ends <= starts


def test_the_rate_limit_counts_a_token_once_across_processes_and_interfaces(acme: Tenant, cluster: Cluster) -> None:
    if time.time() % 3600 > 3590:  # one window: the sliding estimate would weigh the previous one
        time.sleep(3601 - time.time() % 3600)
    headers = _bearer(acme.raw_tokens["reader"])
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    def call(url: str, i: int) -> httpx.Response:
        if i % 4 < 2:
            return httpx.get(f"{url}/api/v1/status/", headers=headers, timeout=60)
        return httpx.post(f"{url}/mcp", json=ping, headers={**headers, **MCP_HEADERS}, timeout=60)

    responses = [response for _ in range(4) for response in _both(cluster, 20, call)]

    statuses = [r.status_code for r in responses]
    assert statuses.count(429) == len(responses) - RATE, statuses
    assert statuses.count(200) == RATE


def test_consolidation_runs_sent_to_two_workers_never_overlap(acme: Tenant, cluster: Cluster) -> None:
    headers = _bearer(acme.raw_tokens["agent"])
    texts = [f"Queue {n} retries a failed job {n + 2} times before parking it." for n in range(6)]
    entries = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": content}
        for text in texts
        for content in (text, text.upper())
    ]
    for url, half in zip(cluster.urls, (entries[::2], entries[1::2]), strict=True):
        written = httpx.post(f"{url}/api/v1/memories/batch/", json={"memories": half}, headers=headers, timeout=120)
        assert written.status_code == 200, written.text

    with app.connection_for_write(REDIS_URL) as connection:
        for _ in range(2):
            app.send_task(
                "lifecycle.tasks.lifecycle_consolidate",
                args=[acme.organization.pk],
                queue=cluster.queue,
                connection=connection,
            )
    wait_for(lambda: redis.Redis.from_url(REDIS_URL).llen(cluster.queue) == 0, 60, "both tasks taken")
    wait_for(lambda: LifecycleRun.objects.filter(status=RunStatus.COMPLETED).exists(), 120, "a completed run")
    wait_for(lambda: not LifecycleRun.objects.filter(status=RunStatus.RUNNING).exists(), 60, "no run running")

    runs = list(LifecycleRun.objects.order_by("started_at"))
    for earlier, later in itertools.pairwise(runs):
        assert earlier.finished_at is not None and earlier.finished_at <= later.started_at
    alive = Memory.objects.filter(organization=acme.organization, superseded_by__isnull=True)
    assert alive.count() == len(texts)


def test_killing_one_web_process_loses_no_acknowledged_write(acme: Tenant, cluster: Cluster) -> None:
    headers = _bearer(acme.raw_tokens["curator"])
    acknowledged: dict[str, str] = {}
    refused: list[str] = []
    lock = threading.Lock()

    def write(url: str, writes: int, name: str) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            for n in range(writes):
                content = f"Note {n} from {name}: the build cache lives in bucket {n}."
                body = {"scope_type": "organization", "memory_type": "fact", "current_content": content}
                try:
                    response = client.post("/api/v1/memories/", json=body)
                except httpx.TransportError as error:
                    refused.append(f"{name}: {error!r}")
                    continue
                if response.status_code == 201:
                    with lock:
                        acknowledged[response.json()["id"]] = content

    doomed, survivor = cluster.web[0], cluster.urls[1]
    writers = [
        threading.Thread(target=write, args=(cluster.urls[0], 25, "a")),
        threading.Thread(target=write, args=(survivor, 25, "b")),
    ]
    for writer in writers:
        writer.start()
    wait_for(lambda: len(acknowledged) >= 10, 60, "writes through both processes")
    doomed.send_signal(signal.SIGKILL)
    for writer in writers:
        writer.join(timeout=120)
    doomed.wait()

    assert refused, "the killed process kept answering"
    stored = dict(Memory.objects.filter(organization=acme.organization).values_list("id", "current_content"))
    assert {str(pk): content for pk, content in stored.items() if str(pk) in acknowledged} == acknowledged
    assert sum(1 for content in acknowledged.values() if " from b:" in content) == 25
