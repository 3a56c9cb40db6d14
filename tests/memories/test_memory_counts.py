"""Counting memories without reading every row.

The embedding backlog (the health check, the metrics, the status report, the curators' dashboard,
the embedding sweep) is read from an index of only the memories that wait for their embedding or
failed at it; the status report and the dashboard count by status and by type in one pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import Count, QuerySet
from django.test.utils import CaptureQueriesContext

from memories.embedding_pipeline import pending_memories
from memories.models import EmbeddingStatus, Memory, MemoryType, Status
from memories.selectors import memory_counts, memory_status_report, memory_visible_queryset
from tests.conftest import MemoryFactory, Tenant

WAITING_INDEX = "memory_embedding_waiting_idx"


@contextmanager
def _no_table_scans() -> Iterator[None]:
    """The planner as on a large table: a test's few rows would be read whole anyway."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('enable_seqscan', 'off', true)")
        yield


def _plan(queryset: QuerySet[Any]) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.django_db
def test_every_backlog_read_is_planned_on_the_index_of_waiting_memories(acme: Tenant) -> None:
    alive = Memory.objects.filter(organization=acme.organization, deleted_at__isnull=True)
    reads = {
        "health check and metrics": pending_memories().values("pk"),
        "embedding sweep": pending_memories().order_by("created_at", "pk").values_list("pk")[:64],
        "one organization's embedding": pending_memories(organization=acme.organization)
        .order_by("created_at", "pk")
        .values_list("pk")[:64],
        "status report": memory_visible_queryset(acme.agent).filter(embedding_status=EmbeddingStatus.PENDING),
        "dashboard": alive.filter(embedding_status__in=[EmbeddingStatus.PENDING, EmbeddingStatus.FAILED])
        .order_by()
        .values_list("embedding_status")
        .annotate(n=Count("pk")),
    }
    with _no_table_scans():
        plans = {name: _plan(queryset) for name, queryset in reads.items()}
    assert {name: WAITING_INDEX in plan for name, plan in plans.items()} == dict.fromkeys(reads, True), plans


@pytest.mark.django_db
def test_the_status_report_counts_by_status_and_type_in_one_pass(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory(title="Deploys need two approvals", memory_type=MemoryType.BUSINESS_RULE)
    make_memory(title="We chose PostgreSQL", memory_type=MemoryType.DECISION_LOG)
    draft = make_memory(title="Billing runs nightly", memory_type=MemoryType.FACT)
    Memory.objects.filter(pk=draft.pk).update(status=Status.DEPRECATED)
    with CaptureQueriesContext(connection) as queries:
        report = memory_status_report(acme.agent)
    reads_of_memories = [q["sql"] for q in queries.captured_queries if 'FROM "memories_memory"' in q["sql"]]

    assert report["memories"]["total"] == 3
    assert report["memories"]["by_type"] == {"business_rule": 1, "decision_log": 1, "fact": 1}
    assert sum(report["memories"]["by_status"].values()) == 3
    assert report["memories"]["by_status"][Status.DEPRECATED] == 1
    # One pass for the counts, one read of the backlog's index: not one pass per count.
    assert len(reads_of_memories) == 2, reads_of_memories


@pytest.mark.django_db
def test_memory_counts_sums_status_and_type_over_the_same_rows(acme: Tenant, make_memory: MemoryFactory) -> None:
    for n, (memory_type, status) in enumerate(
        [
            (MemoryType.FACT, Status.VERIFIED),
            (MemoryType.FACT, Status.DEPRECATED),
            (MemoryType.FACT, Status.DEPRECATED),
            (MemoryType.CONVENTION, Status.DEPRECATED),
        ]
    ):
        memory = make_memory(title=f"Memory number {n}", memory_type=memory_type)
        Memory.objects.filter(pk=memory.pk).update(status=status)
    counts = memory_counts(Memory.objects.filter(organization=acme.organization))

    assert counts.by_type == {"fact": 3, "convention": 1}
    assert counts.by_status == {"verified": 1, "deprecated": 3}
    assert counts.total == 4
