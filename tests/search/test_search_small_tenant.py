"""A tenant of a large table gets its full, exact top k, on each of the vector retriever's paths.

The table holds 200 real memories of acme and 5,000 vectors of another organization near them (acme
is under 4% of the rows), ANALYZEd. Acme is searched: as a small scope (an exact scan), as a large one
before its own indexes exist (the same SQL as the HNSW path; with no index to walk, PostgreSQL sorts
acme's rows, which is exact too), and through its own HNSW graph (memories.search.tenant_indexes),
which holds acme's rows alone: the other organization's rows cannot crowd acme's out of the scan.
How long searches take for a tenant of a large table is measured by bench/search_latency.py and
bench/scale.py.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memories.batch import memory_batch_create
from memories.embeddings import get_provider
from memories.models import EMBEDDING_DIMENSIONS, Memory
from memories.search import tenant_indexes
from memories.search.caches import search_caches
from tests.conftest import Tenant
from tests.search.conftest import hit_ids, search

BACKGROUND_ROWS = 5_000
TEAMS = ["payments", "search", "mobile", "data", "platform", "security", "billing", "growth", "infra", "support"]
FACTS = [
    "restarts the staging servers every Sunday night",
    "rotates the database passwords each quarter",
    "sends invoices on the first business day of the month",
    "keeps application logs for thirty days",
    "runs load tests before every major release",
    "reviews on-call handovers on Monday mornings",
    "deploys behind feature flags with a canary stage",
    "stores backups in a second region",
    "answers customer tickets within four hours",
    "pins dependency versions and updates them monthly",
    "writes a postmortem for every paging incident",
    "tracks error budgets on a shared dashboard",
    "uses Kafka for events between services",
    "requires two approvals for schema migrations",
    "owns the public status page",
    "freezes deploys during the last week of December",
    "encrypts personal data at rest with per-tenant keys",
    "measures page load time on low-end Android phones",
    "migrates cron jobs to the workflow engine",
    "publishes release notes every second Thursday",
]
QUERIES = ["who reboots the test environment?", "how long do we keep logs?", "database credential rotation"]


@contextlib.contextmanager
def _planner(**options: str) -> Iterator[None]:
    """Planner settings for the rest of the test transaction, restored on exit."""
    with connection.cursor() as cursor:
        previous = {}
        for name, value in options.items():
            cursor.execute(f"SELECT current_setting('{name}')")
            previous[name] = cursor.fetchone()[0]
            cursor.execute(f"SELECT set_config('{name}', %s, true)", [value])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for name, value in previous.items():
                cursor.execute(f"SELECT set_config('{name}', %s, true)", [value])


def _fill_table(acme: Tenant, globex: Tenant) -> None:
    entries = [
        {
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": f"The {team} team {fact}.",
            "importance": 1 + (n % 10),
        }
        for n, (team, fact) in enumerate((team, fact) for fact in FACTS for team in TEAMS)
    ]
    assert all(result.ok for result in memory_batch_create(principal=acme.agent, entries=entries))

    # The other organization writes about the same things: each of its vectors is one of acme's
    # plus Gaussian noise (cosine about 0.7 to it), so acme's rows are never simply the nearest.
    # (Uniformly random vectors are nearly orthogonal to any real query: acme's rows would be the
    # nearest anyway, and a plain HNSW scan would pass this test.) Rows are copied from one template
    # made by the ORM, in SQL: bulk_create of thousands of rows costs seconds of Python.
    template = Memory.objects.bulk_create(
        [Memory(organization=globex.organization, memory_type="fact", title="t", current_content="t")]
    )[0]
    computed = {
        "id": "gen_random_uuid()",
        "title": "'Background memory ' || n",
        "current_content": "'Background memory number ' || n",
        "embedding_status": "'ready'",
        "embedding": "l2_normalize(source.embedding + ARRAY(SELECT random_normal(0, 0.05) "  # noqa: S608
        f"FROM generate_series(1, {EMBEDDING_DIMENSIONS}) WHERE n > 0)::vector)",
    }
    columns = [field.column for field in Memory._meta.concrete_fields if not field.generated]
    names = ", ".join(f'"{column}"' for column in columns)
    values = ", ".join(computed.get(column, f't."{column}"') for column in columns)
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.42)")
        cursor.execute(
            f"INSERT INTO memories_memory ({names}) SELECT {values} "  # noqa: S608 - names from the model
            "FROM memories_memory t CROSS JOIN generate_series(1, %s) n "
            "JOIN (SELECT row_number() OVER (ORDER BY id) - 1 AS i, embedding FROM memories_memory "
            "      WHERE organization_id = %s) source ON source.i = n %% %s "
            "WHERE t.id = %s",
            [BACKGROUND_ROWS, acme.organization.pk, len(entries), template.pk],
        )
        cursor.execute("DELETE FROM memories_memory WHERE id = %s", [template.pk])
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # CREATE INDEX refuses pending FK checks
        cursor.execute("ANALYZE memories_memory")


def _exact_top(acme: Tenant, query: str, k: int) -> list[Any]:
    """Brute force: every acme row's distance, sorted, no index."""
    vector = str(get_provider().embed_one(query))
    no_index = _planner(enable_indexscan="off", enable_bitmapscan="off", enable_sort="on")
    with transaction.atomic(), no_index, connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM memories_memory WHERE organization_id = %s AND deleted_at IS NULL "
            "AND embedding IS NOT NULL ORDER BY embedding <=> %s::vector, importance DESC, created_at DESC, id "
            "LIMIT %s",
            [acme.organization.pk, vector, k],
        )
        return [row[0] for row in cursor.fetchall()]


def _vector_sql(captured: CaptureQueriesContext) -> str:
    statements = [query["sql"] for query in captured.captured_queries if "<=>" in query["sql"]]
    assert len(statements) == 1
    # The HNSW path sends its settings in the same round trip, as a statement before the query.
    settings, _, query = statements[0].partition("; ")
    return query if settings.startswith("SELECT set_config(") else statements[0]


def _explain(sql: str, iterative_scan: str) -> tuple[str, int]:
    """The plan of the search's vector query, and how many rows it returns, under one scan mode."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.iterative_scan = {iterative_scan}")
        cursor.execute(f"EXPLAIN {sql}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(sql)
        return plan, len(cursor.fetchall())


def test_a_one_percent_tenant_gets_its_exact_top_k(acme: Tenant, globex: Tenant, settings: Any) -> None:
    _fill_table(acme, globex)
    assert Memory.objects.filter(organization=acme.organization).count() == len(FACTS) * len(TEAMS)
    assert Memory.objects.count() == BACKGROUND_ROWS + len(FACTS) * len(TEAMS)
    own_hnsw, _own_text = tenant_indexes.index_names(acme.organization.pk)

    failures = []
    for path in ("exact", "not indexed yet", "own index"):
        planner: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
        if path != "exact":
            # Past the exact-scan threshold, and with sorting discouraged: at this size the planner
            # itself would (rightly) sort acme's rows, and the index path would go untested.
            settings.SEARCH_EXACT_SCAN_LIMIT = 0
            planner = _planner(enable_sort="off")
            search_caches.reset()
        if path == "own index":
            assert tenant_indexes.organizations_due() == [
                (globex.organization.pk, BACKGROUND_ROWS),  # largest first
                (acme.organization.pk, len(FACTS) * len(TEAMS)),
            ]
            assert tenant_indexes.build(acme.organization.pk) == list(tenant_indexes.index_names(acme.organization.pk))
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE memories_memory")
                cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [own_hnsw])
                assert cursor.fetchone()[0] == len(FACTS) * len(TEAMS), "acme's graph holds acme's rows alone"
        with planner:
            for query in QUERIES:
                for k in (10, 50):
                    with CaptureQueriesContext(connection) as captured:
                        page = search(acme.agent, query=query, mode="vector", limit=k, min_score=0)
                    expected = _exact_top(acme, query, k)
                    if hit_ids(page) != expected:
                        overlap = len(set(hit_ids(page)) & set(expected))
                        failures.append(f"{path} {query!r} k={k}: {len(page.hits)} hits, {overlap} of the exact top")
                    plan, _rows = _explain(_vector_sql(captured), "relaxed_order")
                    walked = any(graph in plan for graph in ("memory_hvec_o", "memory_hnsw_o"))
                    assert walked == (path == "own index"), plan[:600]
                    assert (own_hnsw in plan) == (path == "own index"), plan[:600]

    assert failures == []
    # The other organization is not searched through acme's graph.
    with _planner(enable_sort="off"), CaptureQueriesContext(connection) as captured:
        search(globex.agent, query=QUERIES[0], mode="vector", limit=10, min_score=0)
    assert own_hnsw not in _explain(_vector_sql(captured), "relaxed_order")[0]
