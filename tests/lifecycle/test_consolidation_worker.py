"""Real Celery worker processes on the real Redis: two at once, and one killed mid-run.

Each test has a queue of its own on the Redis at 127.0.0.1:6379, so nothing else's tasks reach
these workers. A run merges one pair per transaction; a worker killed with SIGKILL leaves whole
merges or none, and the next run finishes the work.
"""

from __future__ import annotations

import itertools
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from lifecycle.models import ConsolidationProposal, LifecycleRun, ProposalState, RunStatus
from memories.batch import memory_batch_create
from memories.models import Memory
from memory_platform.celery import app
from tests.conftest import Tenant
from tests.redis_workers import REDIS_URL, StartWorker, drop_queue, private_queue, workers
from tests.worker.conftest import process_gone, wait_for

pytestmark = pytest.mark.processes

TASK = "lifecycle.tasks.lifecycle_consolidate"
PAIRS = 100


@pytest.fixture
def queue() -> Iterator[str]:
    name = private_queue("test-lifecycle")
    yield name
    drop_queue(name)


@pytest.fixture
def start_worker(queue: str, tmp_path: Path) -> Iterator[StartWorker]:
    # Merges alone: the pairs' texts differ from each other's by numbers, which would also make each
    # a contradiction candidate of its neighbours (~700 proposals, three quarters of the run's work).
    yield from workers(
        queue, tmp_path, CONSOLIDATION_AUTO_MERGE_SHARE="1", CONSOLIDATION_CONFLICT="1", CONSOLIDATION_RELATED="1"
    )


def send(organization_id: int, queue: str) -> None:
    with app.connection_for_write(REDIS_URL) as connection:
        app.send_task(TASK, args=[organization_id], queue=queue, connection=connection)


@pytest.fixture
def pairs(acme: Tenant) -> list[tuple[Memory, Memory]]:
    texts = [f"Service {n} answers health checks at /healthz/{n} within {n + 1} ms." for n in range(PAIRS)]
    entries = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": content}
        for text in texts
        for content in (text, text.upper())
    ]
    made = [result.memory for result in memory_batch_create(principal=acme.agent, entries=entries)]
    assert all(made)
    return [(made[i], made[i + 1]) for i in range(0, len(made), 2)]


def assert_nothing_lost(acme: Tenant) -> None:
    """Every memory alive or superseded by a live one; every applied merge whole."""
    memories = {m.pk: m for m in Memory.objects.filter(organization=acme.organization)}
    for memory in memories.values():
        if memory.superseded_by_id is not None:
            assert memories[memory.superseded_by_id].superseded_by_id is None, memory.pk
    for proposal in ConsolidationProposal.objects.filter(state=ProposalState.APPLIED):
        members = [memories[pk] for pk in proposal.memory_ids]
        assert {m.superseded_by_id for m in members if m.pk != proposal.survivor_id} == {proposal.survivor_id}


def assert_converged(pairs: list[tuple[Memory, Memory]]) -> None:
    for first, second in pairs:
        alive = Memory.objects.filter(pk__in=[first.pk, second.pk], superseded_by__isnull=True).count()
        assert alive == 1, (first.pk, second.pk)


@pytest.mark.django_db(transaction=True)
def test_two_workers_at_once_never_run_one_organization_twice(
    acme: Tenant, pairs: list[tuple[Memory, Memory]], queue: str, start_worker: Any
) -> None:
    start_worker("one")
    start_worker("two")
    send(acme.organization.pk, queue)
    send(acme.organization.pk, queue)

    wait_for(lambda: LifecycleRun.objects.filter(status=RunStatus.COMPLETED).exists(), 120, "a completed run")
    wait_for(lambda: redis.Redis.from_url(REDIS_URL).llen(queue) == 0, 30, "both tasks taken")
    wait_for(lambda: not LifecycleRun.objects.filter(status=RunStatus.RUNNING).exists(), 60, "no run running")

    runs = list(LifecycleRun.objects.order_by("started_at"))
    for earlier, later in itertools.pairwise(runs):
        assert earlier.finished_at is not None and earlier.finished_at <= later.started_at
    assert sum(run.counts.get("auto_merged", 0) for run in runs) == PAIRS
    assert ConsolidationProposal.objects.filter(state=ProposalState.APPLIED).count() == PAIRS
    assert ConsolidationProposal.objects.count() == PAIRS, "merges only"
    assert_converged(pairs)
    assert_nothing_lost(acme)


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_run_loses_nothing_and_the_next_run_converges(
    acme: Tenant, pairs: list[tuple[Memory, Memory]], queue: str, start_worker: Any
) -> None:
    doomed = start_worker("doomed")
    send(acme.organization.pk, queue)
    wait_for(
        lambda: ConsolidationProposal.objects.filter(state=ProposalState.APPLIED).count() >= 5,
        120,
        "the run to merge a few pairs",
        poll=0.02,
    )
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait()
    assert process_gone(doomed.pid)

    interrupted = LifecycleRun.objects.get()
    assert interrupted.status == RunStatus.RUNNING, "killed before the run finished"
    merged_before_restart = ConsolidationProposal.objects.filter(state=ProposalState.APPLIED).count()
    assert merged_before_restart < PAIRS
    assert_nothing_lost(acme)

    start_worker("restarted")
    send(acme.organization.pk, queue)
    wait_for(lambda: LifecycleRun.objects.filter(status=RunStatus.COMPLETED).exists(), 120, "the next run")

    interrupted.refresh_from_db()
    assert interrupted.status == RunStatus.FAILED and "interrupted" in interrupted.errors
    assert ConsolidationProposal.objects.filter(state=ProposalState.APPLIED).count() == PAIRS
    assert_converged(pairs)
    assert_nothing_lost(acme)
