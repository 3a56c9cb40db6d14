"""The vector retriever: cosine distance on the HNSW index, with pgvector's iterative scan so a
filtered query still returns its full top-k; small scopes are searched exactly instead."""

from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet

from memories.fields import vector_text
from memories.models import Memory
from memories.search.caches import scope_as_sql, scope_sizes
from memories.search.params import Candidate, micros


def vector_candidates(
    scope: QuerySet[Memory], vector: list[float], k: int, *, organization_id: int | None = None
) -> list[Candidate]:
    exact_limit = settings.SEARCH_EXACT_SCAN_LIMIT
    small = scope_sizes.is_small(organization_id, scope.filter(embedding__isnull=False), exact_limit)
    scope_sql, scope_params = scope_as_sql(scope, "id", "importance", "created_at", "embedding")
    # An exact scan of a small scope is fast and always right; "+ 0" keeps the planner from walking
    # the shared HNSW graph for a handful of rows. Otherwise the graph is scanned until enough rows
    # pass the tenant and filters.
    ordering = "(s.embedding <=> %s::vector) + 0" if small else "s.embedding <=> %s::vector"
    sql = (
        f"SELECT s.id, s.importance, s.created_at, s.embedding <=> %s::vector FROM ({scope_sql}) s "  # noqa: S608 - our SQL and the scope's, values as parameters
        f"WHERE s.embedding IS NOT NULL ORDER BY {ordering} LIMIT %s"
    )
    text = vector_text(vector)
    with transaction.atomic(), connection.cursor() as cursor:
        if not small:  # both settings in one round trip, for this transaction only
            ef_search = str(max(settings.SEARCH_HNSW_EF_SEARCH, k))
            cursor.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                "set_config('hnsw.ef_search', %s, true)",
                [ef_search],
            )
        cursor.execute(sql, [text, *scope_params, text, k])
        rows = list(cursor.fetchall())
    # relaxed_order may return rows slightly out of order: order them by true distance, and equal
    # distances as the result is ordered, so rank-based fusion keeps the importance/recency contract.
    rows.sort(key=lambda row: (row[3], -row[1], -micros(row[2]), str(row[0])))
    return [
        Candidate(pk=pk, importance=importance, created_at=created_at, similarity=1.0 - dist, vector_rank=rank)
        for rank, (pk, importance, created_at, dist) in enumerate(rows, start=1)
    ]
