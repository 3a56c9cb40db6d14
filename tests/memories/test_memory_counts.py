"""Counting memories without reading every row.

The embedding backlog (the health check, the metrics, the status report, the curators' dashboard,
the embedding sweep) is read from an index of only the memories that wait for their embedding or
failed at it; the status report and the dashboard count by status and by type in one pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from curation.selectors import dashboard
from memories.embedding_pipeline import embed_pending
from memories.models import EmbeddingStatus, Memory, MemoryType, Status
from memories.selectors import memory_counts, memory_status_report
from tests.conftest import MemoryFactory, Tenant

WAITING_INDEX = "memory_embedding_waiting_idx"


def _backlog_reads(run: Callable[[], object]) -> list[str]:
    """The statements ``run`` sends that read memories by their embedding's state."""
    with CaptureQueriesContext(connection) as queries:
        run()
    return [q["sql"] for q in queries.captured_queries if '"embedding_status" ' in q["sql"] and "SELECT" in q["sql"]]


def _plans_without_table_scans(statements: list[str]) -> list[str]:
    """How each statement is planned as on a large table: a test's few rows would be read whole anyway."""
    plans = []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('enable_seqscan', 'off', true)")
        for sql in statements:
            cursor.execute(f"EXPLAIN {sql}")
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


@pytest.mark.django_db
def test_every_backlog_read_is_planned_on_the_index_of_waiting_memories(
    acme: Tenant, make_memory: MemoryFactory, settings: Any
) -> None:
    waiting = make_memory(title="Billing uses the ledger database")
    Memory.objects.filter(pk=waiting.pk).update(embedding_status=EmbeddingStatus.PENDING)
    settings.METRICS_TOKEN = "scrape"
    client = Client()
    curator = get_user_model().objects.create(username="backlog-curator")
    reads: dict[str, Callable[[], object]] = {
        "health check": lambda: client.get("/healthz"),
        "metrics": lambda: client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape"),
        "status report": lambda: memory_status_report(acme.agent),
        "dashboard": lambda: dashboard(acme.organization, curator),
        "embedding sweep": embed_pending,
    }
    statements = {name: _backlog_reads(run) for name, run in reads.items()}
    assert all(statements.values()), statements
    plans = {name: _plans_without_table_scans(sqls) for name, sqls in statements.items()}
    assert {name: all(WAITING_INDEX in plan for plan in found) for name, found in plans.items()} == dict.fromkeys(
        reads, True
    ), plans


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
