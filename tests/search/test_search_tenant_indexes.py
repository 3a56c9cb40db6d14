"""Each large organization's own search indexes (memories.search.tenant_indexes): which organizations
are due, a failed build replaced, the keyword retriever reading them, and the move from the shared
indexes (memories migration 0011) made online, while an organization is written to and searched."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from bench.online_layout import drive, migrate_forward, shared_indexes, to_shared_layout
from memories.batch import memory_batch_create
from memories.search import tenant_indexes
from memories.search.caches import search_caches
from organizations.models import Organization
from tests.conftest import Tenant
from tests.search.conftest import search

QUERIES = ["which runbook step checks the queue?", "rotation of the on-call pager", "queue depth alarms"]


def _fill(tenant: Tenant, count: int, topic: str = "runbook") -> None:
    entries = [
        {
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": f"The {topic} note {n} says step {n % 9} checks queue depth {n * 17 % 1009}.",
        }
        for n in range(count)
    ]
    assert all(result.ok for result in memory_batch_create(principal=tenant.agent, entries=entries))


@contextlib.contextmanager
def _planner(**options: str) -> Iterator[None]:
    with transaction.atomic(), connection.cursor() as cursor:
        for name, value in options.items():
            cursor.execute("SELECT set_config(%s, %s, true)", [name, value])
        yield


@pytest.mark.django_db
def test_an_organization_past_the_limit_is_due_until_it_has_its_own_indexes(
    acme: Tenant, globex: Tenant, settings: Any
) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 8)
    _fill(globex, 3)
    names = list(tenant_indexes.index_names(acme.organization.pk))

    assert tenant_indexes.organizations_due() == [(acme.organization.pk, 8)]
    assert tenant_indexes.build(acme.organization.pk) == names
    assert tenant_indexes.organizations_due() == []
    assert tenant_indexes.build(acme.organization.pk) == []  # nothing is missing
    assert [(index.name, index.valid) for index in tenant_indexes.existing()] == [(names[0], True), (names[1], True)]

    _fill(globex, 5, topic="pager")
    assert tenant_indexes.sweep() == {globex.organization.pk: list(tenant_indexes.index_names(globex.organization.pk))}
    assert tenant_indexes.organizations_due() == []
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [names[0]])
        assert cursor.fetchone()[0].endswith(f"WHERE (organization_id = {acme.organization.pk})")


@pytest.mark.django_db
def test_the_indexes_of_an_organization_that_is_gone_are_dropped(acme: Tenant, globex: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 8)
    _fill(globex, 8)
    tenant_indexes.sweep()
    Organization.objects.filter(pk=globex.organization.pk).delete()

    tenant_indexes.sweep()
    assert [index.name for index in tenant_indexes.existing()] == list(tenant_indexes.index_names(acme.organization.pk))


@pytest.mark.django_db
def test_no_more_organizations_than_the_layout_serves_get_their_own(
    acme: Tenant, globex: Tenant, settings: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    monkeypatch.setattr(tenant_indexes, "MAX_ORGANIZATIONS", 1)
    _fill(acme, 8)
    _fill(globex, 12)

    assert list(tenant_indexes.sweep()) == [globex.organization.pk]  # the largest first
    assert tenant_indexes.sweep() == {}
    assert tenant_indexes.organizations_due() == [(acme.organization.pk, 8)]
    assert "gets no search indexes of its own" in caplog.text


@pytest.mark.django_db
def test_a_failed_build_is_replaced(acme: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 8)
    hnsw, text = tenant_indexes.index_names(acme.organization.pk)
    tenant_indexes.build(acme.organization.pk)
    # What a concurrent build that failed (or was cancelled) leaves behind: an index marked invalid,
    # which PostgreSQL keeps up to date but never reads.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [hnsw])

    assert [(i.name, i.valid) for i in tenant_indexes.existing()] == [(hnsw, False), (text, True)]
    assert tenant_indexes.organizations_due() == [(acme.organization.pk, 8)]
    assert tenant_indexes.build(acme.organization.pk) == [hnsw]
    assert [(i.name, i.valid) for i in tenant_indexes.existing()] == [(hnsw, True), (text, True)]


def _reloptions(name: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [name])
        return sorted(cursor.fetchone()[0])


@pytest.mark.django_db
def test_a_graph_built_with_other_settings_is_built_again(acme: Tenant, globex: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 8)
    _fill(globex, 12)
    tenant_indexes.sweep()
    acme_graph, _acme_text = tenant_indexes.index_names(acme.organization.pk)
    globex_graph, _ = tenant_indexes.index_names(globex.organization.pk)
    assert _reloptions(acme_graph) == ["ef_construction=64", "m=16"]
    assert all(index.current for index in tenant_indexes.existing())

    settings.SEARCH_HNSW_M, settings.SEARCH_HNSW_EF_CONSTRUCTION = 8, 40
    assert {i.name for i in tenant_indexes.existing() if not i.current} == {acme_graph, globex_graph}
    assert tenant_indexes.organizations_due() == []  # searched as they are meanwhile: nothing is missing
    done = tenant_indexes.sweep()

    assert done == {acme.organization.pk: [acme_graph], globex.organization.pk: [globex_graph]}
    assert _reloptions(acme_graph) == _reloptions(globex_graph) == ["ef_construction=40", "m=8"]
    assert all(index.current and index.valid for index in tenant_indexes.existing())
    assert tenant_indexes.sweep() == {}
    # The graph was built anew, not only relabelled: its first page says m 8 (pgvector's metapage,
    # after the 24-byte page header: a magic number, a version, the dimensions, then m).
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        cursor.execute("SELECT substring(get_raw_page(%s, 0) FROM 33 FOR 8)", [acme_graph])
        metapage = bytes(cursor.fetchone()[0])
    assert (int.from_bytes(metapage[0:4], "little"), int.from_bytes(metapage[4:6], "little")) == (384, 8)
    # And it is still the organization's graph: a memory's own vector finds it first.
    hits = search(acme.agent, query="step 3 checks queue depth", mode="vector", limit=3, min_score=0).hits
    assert hits


def _vector_plan(tenant: Tenant) -> str:
    with CaptureQueriesContext(connection) as captured:
        page = search(tenant.agent, query="step 3 checks queue depth", mode="vector", limit=5, min_score=0)
    assert page.hits
    [sql] = [q["sql"] for q in captured.captured_queries if "ORDER BY s.embedding" in q["sql"]]
    with _planner(enable_sort="off", enable_seqscan="off"), connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.django_db
def test_a_graph_over_the_stored_vectors_is_walked_until_its_half_precision_one_replaces_it(
    acme: Tenant, settings: Any
) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 8)
    old = tenant_indexes.full_precision_graph(acme.organization.pk)
    half, text = tenant_indexes.index_names(acme.organization.pk)
    # What the sweep built before: a graph over the stored vectors, and the full-text index.
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no index is built on a table with checks pending
        cursor.execute(
            f"CREATE INDEX {old} ON memories_memory USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = 16, ef_construction = 64) WHERE organization_id = {acme.organization.pk}"
        )
    tenant_indexes.build(acme.organization.pk)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {half}")
    search_caches.reset()
    assert tenant_indexes.graph_precisions() == {acme.organization.pk: tenant_indexes.FULL}
    assert old in _vector_plan(acme)  # walked as it is meanwhile, not a sort of the rows

    assert tenant_indexes.sweep() == {acme.organization.pk: [half]}  # the replacement, beside it
    assert {i.name for i in tenant_indexes.existing()} == {old, half, text}
    plan = _vector_plan(acme)
    assert half in plan and old not in plan
    assert tenant_indexes.sweep() == {}  # the next sweep drops the old graph
    assert {i.name for i in tenant_indexes.existing()} == {half, text}
    assert tenant_indexes.graph_precisions() == {acme.organization.pk: tenant_indexes.HALF}


@pytest.mark.django_db
def test_what_a_failed_rebuild_leaves_is_dropped(acme: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 8)
    tenant_indexes.sweep()
    graph, _text = tenant_indexes.index_names(acme.organization.pk)
    # What a REINDEX CONCURRENTLY that failed leaves: an invalid copy beside the graph.
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX {graph}_ccnew ON memories_memory USING hnsw (embedding vector_cosine_ops) "
            f"WHERE organization_id = {acme.organization.pk}"
        )
        cursor.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [f"{graph}_ccnew"])

    assert tenant_indexes.sweep() == {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_class WHERE relname = %s", [f"{graph}_ccnew"])
        assert cursor.fetchone()[0] == 0


@pytest.mark.django_db
def test_keyword_search_reads_the_organizations_own_text_index(acme: Tenant, globex: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    settings.SEARCH_KEYWORD_SCAN_LIMIT = 5
    for tenant in (acme, globex):
        _fill(tenant, 40)
        _fill(tenant, 2, topic="Kafka broker")
    tenant_indexes.build(acme.organization.pk)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    _hnsw, text = tenant_indexes.index_names(acme.organization.pk)
    search_caches.reset()

    def plan(tenant: Tenant) -> str:
        with CaptureQueriesContext(connection) as captured:
            page = search(tenant.agent, query="kafka", mode="keyword", limit=5, min_score=0)
        assert page.hits
        [sql] = [q["sql"] for q in captured.captured_queries if "@@" in q["sql"] and "bm25" in q["sql"]]
        # Tables this small are read whole unless the planner may not.
        with _planner(enable_seqscan="off"), connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN {sql}")
            return "\n".join(row[0] for row in cursor.fetchall())

    assert text in plan(acme)
    assert text not in plan(globex)


@pytest.mark.django_db(transaction=True)
def test_the_move_from_the_shared_indexes_is_online(acme: Tenant, globex: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 150
    to_shared_layout()
    try:
        _fill(acme, 200)
        _fill(globex, 20)
        assert shared_indexes() == ["memory_embedding_hnsw", "memory_search_vector_gin"]
        assert tenant_indexes.existing() == []
        outcome = drive(migrate_forward, [acme.agent, globex.agent], [(acme.agent, QUERIES)], settle=1.0)
    finally:
        call_command("migrate", verbosity=0)  # the database ends as every other test expects

    assert outcome.write_errors == []
    assert outcome.search_errors == []
    assert outcome.written and outcome.searches
    assert outcome.lost() == 0
    assert shared_indexes() == []
    # Acme had its own indexes built by the move (globex may have grown past the line during it:
    # the worker's next sweep is for that).
    assert acme.organization.pk not in dict(tenant_indexes.organizations_due())
    assert [i.organization_id for i in tenant_indexes.existing() if i.valid] == [acme.organization.pk] * 2
    # Every memory of acme, written before, during or after the build, is in acme's own graph: its
    # own vector finds it there first.
    hnsw, _text = tenant_indexes.index_names(acme.organization.pk)
    nearest = tenant_indexes.nearest_first(tenant_indexes.HALF, "n.embedding", "m.embedding")
    first = "(SELECT embedding FROM memories_memory LIMIT 1)"
    from_first = tenant_indexes.nearest_first(tenant_indexes.HALF, "n.embedding", first)
    each = (
        "SELECT m.id, (SELECT n.id FROM memories_memory n WHERE n.organization_id = m.organization_id "  # noqa: S608 - our SQL
        f"ORDER BY {nearest} LIMIT 1) FROM memories_memory m WHERE m.organization_id = %s"
    )
    walk = f"EXPLAIN SELECT id FROM memories_memory n WHERE organization_id = %s ORDER BY {from_first} LIMIT 1"  # noqa: S608 - our SQL
    with _planner(enable_sort="off", enable_seqscan="off"), connection.cursor() as cursor:
        cursor.execute(each, [acme.organization.pk])
        rows = cursor.fetchall()
        cursor.execute(walk, [acme.organization.pk])
        assert hnsw in "\n".join(row[0] for row in cursor.fetchall())
    assert len(rows) >= 200 + 1
    assert [pk for pk, nearest in rows if pk != nearest] == []
