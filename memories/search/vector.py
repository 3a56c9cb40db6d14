"""The vector retriever: cosine distance on the organization's own HNSW index, with pgvector's
iterative scan so a filtered query still returns its full top-k; small scopes (and organizations
whose index is not built yet) are searched exactly instead."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db.models import QuerySet

from memories.fields import vector_text
from memories.models import Memory
from memories.search import tenant_indexes
from memories.search.caches import ScopeSQL, created_micros, graphs, in_session, scope_sizes, standing
from memories.search.params import Candidate
from memory_platform.db.base import session_ef_search
from memory_platform.db.prepared import bound_cursor
from memory_platform.db.replicas import read_connection, reading
from memory_platform.db.transactions import savepoint_if_in_transaction

_ITERATIVE = "set_config('hnsw.iterative_scan', 'relaxed_order', true)"


def half_margin(k: int) -> int:
    """How many more candidates a walk of a half-precision graph reads than it keeps: enough that a
    memory whose two distances order differently at the edge of the top ``k`` is still among them."""
    return max(4, k // 5)


def vector_candidates(
    scope: QuerySet[Memory] | ScopeSQL,
    vector: Sequence[float] | str,
    k: int,
    *,
    organization_id: int | None = None,
) -> list[Candidate]:
    """The ``k`` memories of the scope nearest to ``vector`` (or to its text, memories.fields.vector_text,
    when the caller needs that text again)."""
    scope = ScopeSQL.of(scope)
    small = scope_sizes.is_small(organization_id, scope, settings.SEARCH_EXACT_SCAN_LIMIT)
    # An exact scan of a small scope is fast and always right; "+ 0" keeps the planner from walking
    # an HNSW graph for a handful of rows. Otherwise the organization's own graph, where it has one
    # (memories.search.tenant_indexes), is scanned until enough rows pass the filters; without one,
    # PostgreSQL sorts the organization's rows, which is exact.
    # A half-precision graph is walked by the half-precision distance; its candidates, a few more
    # than asked for, are then ordered by their stored vectors' (below), so the answer is the one a
    # graph over the stored vectors would give.
    precision = None if small else graphs.precision(organization_id)
    if small:
        ordering, limit = "(s.embedding <=> %s::vector) + 0", k
    else:
        ordering = tenant_indexes.nearest_first(precision, "s.embedding", "%s::vector")
        limit = k + half_margin(k) if precision == tenant_indexes.HALF else k
    # Each arm of the scope (a search's: the organization's rows, others' shared ones) ordered and
    # limited on its own, so that PostgreSQL walks the organization's own HNSW graph for the first.
    parts, params = [], []
    text = vector if isinstance(vector, str) else vector_text(vector)
    for arm_sql, arm_params in scope.arms:
        parts.append(
            f"(SELECT s.id, s.importance, {created_micros('s')}, s.embedding <=> %s::vector, {in_session('s')},"  # noqa: S608 - our SQL and the scope's, values as parameters
            f" {standing('s')} FROM ({arm_sql}) s WHERE s.embedding IS NOT NULL ORDER BY {ordering} LIMIT %s)"
        )
        params += [text, *arm_params, text, limit]
    sql = " UNION ALL ".join(parts)
    # Inside a transaction of the caller's, a savepoint keeps a failure here from failing it, as before.
    savepoint = savepoint_if_in_transaction(reading())
    if small or limit <= session_ef_search():
        # One statement, its values bound apart from its text (the vector, twice, is not parsed as
        # a literal): the connection's session already walks the HNSW graph as this query needs
        # (memory_platform.db.base.session_settings).
        with savepoint, bound_cursor(reading()) as cursor:
            cursor.execute(sql, params)
            rows = list(cursor.fetchall())
    else:
        # The HNSW settings for this query only: set_config(..., true) lasts until the end of the
        # transaction, and the two statements sent as one run in one (implicit) transaction, in one
        # round trip instead of BEGIN, SET, SELECT and COMMIT. (Django's psycopg cursor binds the
        # parameters itself and sends the text by the simple protocol, which takes several statements.)
        sql = f"SELECT {_ITERATIVE}, set_config('hnsw.ef_search', %s, true); {sql}"
        params = [str(max(settings.SEARCH_HNSW_EF_SEARCH, limit)), *params]
        with savepoint, read_connection().cursor() as cursor:
            cursor.execute(sql, params)
            cursor.nextset()
            rows = list(cursor.fetchall())
    # relaxed_order may return rows slightly out of order: order them by true distance, and equal
    # distances as the result is ordered, so rank-based fusion keeps the importance/recency contract.
    rows.sort(key=lambda row: (row[3], -row[1], -row[2], row[0]))  # a UUID orders as its text does
    del rows[k:]
    return [
        Candidate(
            pk=pk,
            importance=importance,
            created=created,
            similarity=1.0 - dist,
            vector_rank=rank,
            in_session=session,
            status=status,
        )
        for rank, (pk, importance, created, dist, session, status) in enumerate(rows, start=1)
    ]
