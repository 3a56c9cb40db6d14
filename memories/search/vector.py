"""The vector retriever: cosine distance on the HNSW index, with pgvector's iterative scan so a
filtered query still returns its full top-k; small scopes are searched exactly instead."""

from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction
from django.db.models import ExpressionWrapper, FloatField, QuerySet, Value
from pgvector.django import CosineDistance

from memories.fields import vector_text
from memories.models import Memory
from memories.search.caches import scope_sizes
from memories.search.params import Candidate, micros


def vector_candidates(
    scope: QuerySet[Memory], vector: list[float], k: int, *, organization_id: int | None = None
) -> list[Candidate]:
    exact_limit = settings.SEARCH_EXACT_SCAN_LIMIT
    embedded = scope.filter(embedding__isnull=False)
    distance = CosineDistance("embedding", Value(vector_text(vector)))
    small = scope_sizes.is_small(organization_id, embedded, exact_limit)
    with transaction.atomic():
        if small:
            # An exact scan of a small scope is fast and always right; "+ 0" keeps the planner
            # from walking the shared HNSW graph for a handful of rows.
            ordering = ExpressionWrapper(distance + Value(0.0), output_field=FloatField())
        else:
            # The shared HNSW graph, scanned until enough rows pass the tenant and filters.
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cursor.execute("SET LOCAL hnsw.ef_search = %s", [max(settings.SEARCH_HNSW_EF_SEARCH, k)])
            ordering = distance  # type: ignore[assignment]
        rows = list(
            embedded.annotate(distance=distance)
            .order_by(ordering)
            .values_list("pk", "importance", "created_at", "distance")[:k]
        )
    # relaxed_order may return rows slightly out of order: order them by true distance, and equal
    # distances as the result is ordered, so rank-based fusion keeps the importance/recency contract.
    rows.sort(key=lambda row: (row[3], -row[1], -micros(row[2]), str(row[0])))
    return [
        Candidate(pk=pk, importance=importance, created_at=created_at, similarity=1.0 - dist, vector_rank=rank)
        for rank, (pk, importance, created_at, dist) in enumerate(rows, start=1)
    ]
