"""memory_search: scope → candidates → rank → floor → page → hydrate, and the browse without a query.

Order: relevance (the calibrated score, times any boost asked for), then importance (desc), then
created_at (desc); keyset cursor pagination. Results scoring below the floor (``min_score``, by
default SEARCH_MIN_SCORE) are left out: a search with a query returns the memories that match it,
not the whole scope; when that leaves the first page empty, the page says how many scored candidates
the floor left out and the best of their scores (BelowFloor), so that an agent can tell "nothing
here" from "something, but weak". With ``min_score`` 0, hybrid search keeps the old promise that
paging reaches the whole scope: the memories neither retriever found follow the scored ones with
score 0, in importance-then-recency order. A legacy fusion's cursor carries the first page's score
scales, so a write between pages cannot shift scores under it. With no query, the order is
importance then recency over the same filtered scope (memories.selectors.memory_page), and no floor
applies.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Q, QuerySet

from memories.access import record_access
from memories.embeddings import EmbeddingError, query_vector_soon
from memories.fields import vector_text
from memories.models import Memory
from memories.search.caches import ScopeSQL, compiled_scopes
from memories.search.cursors import Position, comparable, search_cursor, search_position
from memories.search.features import QueryContext, candidate_features
from memories.search.hits import hit_memories
from memories.search.keyword import QueryTerms, keyword_candidates
from memories.search.params import (
    EPOCH,
    MAX_RESULTS,
    BelowFloor,
    Candidate,
    SearchHit,
    SearchMode,
    SearchPage,
    SearchParams,
    SortKey,
    micros,
)
from memories.search.questions import QueryTraits, query_traits
from memories.search.ranking import Retrieved, rank
from memories.search.vector import vector_candidates
from memories.search.words import expanded, searched_words, words_digest
from memories.selectors import (
    MemoryFilters,
    check_filters,
    memory_filter,
    memory_page,
    memory_visible_arms,
    memory_visible_queryset,
)
from memory_platform.db.beside import read_beside
from memory_platform.db.replicas import lag_tolerant, reading
from memory_platform.exceptions import SearchUnavailable
from memory_platform.metrics import SEARCH_STAGE_SECONDS, timed
from organizations.principal import Principal

logger = logging.getLogger(__name__)


def memory_search(principal: Principal, params: SearchParams, *, counts_as_read: bool = True) -> SearchPage:
    """Search what the principal may see. Raises SearchUnavailable if vector mode cannot embed.

    The hits count as reads (freshness, access counts) unless ``counts_as_read`` is False: a
    curator looking through memories is not an agent using them. Read from the replica when it
    may answer (memory_platform.db.replicas).
    """
    return lag_tolerant(principal.organization.pk, lambda: _search(principal, params, counts_as_read))


def _search(principal: Principal, params: SearchParams, counts_as_read: bool) -> SearchPage:
    if not params.query:
        return _browse(principal, params, counts_as_read=counts_as_read)
    scope = _Scope.of(principal, params)
    found = _candidates(scope)
    carried = scope.position.scales if scope.position else None  # the first page's, on later pages
    with timed(SEARCH_STAGE_SECONDS, stage="rank"):
        ranked, scales = rank(found.retrieved(), params, scope.sql, scales=carried)
        page, has_more, below_floor = _page(scope, ranked, fused=found.fused)
    with timed(SEARCH_STAGE_SECONDS, stage="hydrate"):
        hits = _hydrate(page)
    next_cursor = None
    if has_more and page:
        counts = found.terms.counts if found.terms is not None else None
        next_cursor = search_cursor(
            scope.fingerprint, page[-1].sort_key(), scales, scope.seen + len(page), counts, scope.words_digest
        )
    if counts_as_read:
        record_access([hit.memory.pk for hit in hits])
    return SearchPage(
        hits=hits,
        next_cursor=next_cursor,
        mode=params.mode,
        degraded=found.degraded,
        below_floor=below_floor,
    )


def memory_search_candidates(principal: Principal, params: SearchParams) -> tuple[list[Candidate], Retrieved]:
    """Every candidate of a query with its features, unranked and unfloored: what the ranking model is
    fitted on (bench/locomo.py --fit). Hybrid candidates carry all features; a single mode's, its one."""
    scope = _Scope.of(principal, params)
    retrieved = _candidates(scope).retrieved()
    if retrieved.context is None:
        return [*retrieved.vector_hits, *retrieved.keyword_hits], retrieved
    union = {c.pk: c for c in [*retrieved.vector_hits, *retrieved.keyword_hits]}
    in_sessions = [pk for pk, candidate in union.items() if candidate.in_session]
    return candidate_features(scope.sql, list(union), retrieved.context, neighbors_of=in_sessions), retrieved


# --- scope ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Scope:
    """What one search runs over: the visible, filtered memories, and where the last page ended."""

    params: SearchParams
    principal: Principal
    sql: ScopeSQL  # the queryset compiled once, for every query of the search
    organization_id: int
    fingerprint: str
    position: Position | None
    words: tuple[str, ...]  # the organization's own words the query is searched with
    words_digest: str  # theirs, as a cursor carries it ("" for none)

    @classmethod
    def of(cls, principal: Principal, params: SearchParams) -> _Scope:
        fingerprint = params.fingerprint()
        words = searched_words(params.query, principal.organization.pk)
        digest = words_digest(words)
        params = replace(params, filters=check_filters(principal, params.filters))
        # What the scope's SQL is compiled from (memory_visible_queryset, memory_filter), and no more.
        user = principal.user.pk if principal.user is not None else None
        key = (principal.organization.pk, user, repr(params.filters))
        return cls(
            params=params,
            principal=principal,
            sql=compiled_scopes.get(key, lambda: scope_arms(principal, params.filters)),
            organization_id=principal.organization.pk,
            fingerprint=fingerprint,
            position=search_position(params.cursor, fingerprint, digest) if params.cursor else None,
            words=words,
            words_digest=digest,
        )

    @property
    def queryset(self) -> QuerySet[Memory]:
        return _scope_queryset(self.principal, self.params)

    @property
    def seen(self) -> int:
        return self.position.seen if self.position else 0

    @property
    def limit(self) -> int:
        return self.params.limit or MAX_RESULTS

    @property
    def floor(self) -> float:
        """Results scoring below this are left out."""
        return settings.SEARCH_MIN_SCORE if self.params.min_score is None else self.params.min_score

    def pool(self, *, fused: bool) -> int:
        """Candidates per retriever: enough for a good first page, and for every result up to the next.

        Fused, everything scoring above 0 is among the first page's candidates, and the tail comes
        from _unscored; a single retriever ranks all it finds, so its pool grows page by page.
        """
        return pool_size(self.params.limit, 0 if fused else self.seen)


def _scope_queryset(principal: Principal, params: SearchParams) -> QuerySet[Memory]:
    visible = memory_visible_queryset(principal, include_deleted=params.filters.include_deleted)
    return memory_filter(visible, params.filters)


def scope_arms(principal: Principal, filters: MemoryFilters) -> tuple[QuerySet[Memory], QuerySet[Memory]]:
    """What a search of ``principal`` with ``filters`` runs over, as the two parts its queries are
    planned in (memories.selectors.memory_visible_arms): the same memories as _scope_queryset."""
    own, shared = memory_visible_arms(principal, include_deleted=filters.include_deleted)
    return memory_filter(own, filters), memory_filter(shared, filters)


def pool_size(limit: int | None, seen: int = 0) -> int:
    if limit is None:
        return MAX_RESULTS
    return min(MAX_RESULTS, max(settings.SEARCH_CANDIDATES, 5 * limit, seen + limit + 1))


# --- candidates ----------------------------------------------------------------------------------


@dataclass
class _Found:
    vector_hits: list[Candidate]
    keyword_hits: list[Candidate]
    keyword_floor: float | None
    fused: bool
    degraded: str | None
    mode: SearchMode
    terms: QueryTerms | None = None
    traits: QueryTraits | None = None
    vector: str | None = None  # pgvector's text of the query's vector: formatted once, sent twice

    def retrieved(self) -> Retrieved:
        context = None
        if self.fused and self.terms is not None and self.traits is not None:
            context = QueryContext(vector=self.vector, terms=self.terms, traits=self.traits)
        return Retrieved(
            vector_hits=self.vector_hits,
            keyword_hits=self.keyword_hits,
            keyword_floor=self.keyword_floor,
            terms=self.terms,
            context=context,
            mode=self.mode,
        )


def _start_embedding(scope: _Scope, text: str) -> Future[list[float]] | None:
    if scope.params.mode not in (SearchMode.HYBRID, SearchMode.VECTOR):
        return None
    return query_vector_soon(text)


def _keyword_hits(scope: _Scope, terms: QueryTerms, *, fused: bool) -> tuple[list[Candidate], float | None]:
    # Keyword search alone pages through every match: it asks for at least the next page's worth.
    pool = scope.pool(fused=fused)
    at_least = 0 if fused else min(scope.seen + scope.limit + 1, pool)
    return keyword_candidates(scope.sql, terms, pool, at_least=at_least)


def _vector_hits(scope: _Scope, embedding: Future[list[float]], *, fused: bool) -> tuple[str, list[Candidate]]:
    """The query's vector (pgvector's text of it) and the vector retriever's candidates."""
    with timed(SEARCH_STAGE_SECONDS, stage="embed"):  # what is left of the query's embedding, if any
        vector = vector_text(embedding.result())
    with timed(SEARCH_STAGE_SECONDS, stage="vector"):
        return vector, vector_candidates(
            scope.sql, vector, scope.pool(fused=fused), organization_id=scope.organization_id
        )


def _candidates(scope: _Scope) -> _Found:
    """Both retrievers' candidates; hybrid falls back to keywords alone when the query cannot be embedded.

    In hybrid mode the vector retriever runs beside the keyword one, on a connection of its own
    (memory_platform.db.beside), when it may; else after it, on the request's connection.
    """
    mode = scope.params.mode
    text = expanded(scope.params.query, words=scope.words)  # what both retrievers search for
    embedding = _start_embedding(scope, text)
    found = _Found(vector_hits=[], keyword_hits=[], keyword_floor=None, fused=False, degraded=None, mode=mode)
    found.traits = query_traits(scope.params.query)
    hybrid = mode == SearchMode.HYBRID
    beside = None
    if embedding is not None and hybrid:
        beside = read_beside(reading(), partial(_vector_hits, scope, embedding, fused=True))
    # Vector search alone reads no words; the others start with the query's words.
    terms = (
        None
        if mode == SearchMode.VECTOR
        else QueryTerms.of(
            scope.organization_id,
            text,
            found.traits.names,
            counted=scope.position.counts if scope.position else None,
        )
    )
    if terms is not None:
        found.terms = terms
        with timed(SEARCH_STAGE_SECONDS, stage="keyword"):
            found.keyword_hits, found.keyword_floor = _keyword_hits(scope, terms, fused=hybrid)
    if embedding is None:
        return found
    try:
        found.vector, found.vector_hits = _beside_or_here(scope, embedding, beside, fused=hybrid)
    except EmbeddingError as error:
        if terms is None:
            raise SearchUnavailable(
                f"semantic search is unavailable right now ({error}); retry later or use keyword search"
            ) from error
        found.degraded = f"embedding provider unavailable, keyword results only: {error}"
        found.keyword_hits, found.keyword_floor = _keyword_hits(scope, terms, fused=False)  # keywords alone after all
        found.mode = SearchMode.KEYWORD
        return found
    found.fused = hybrid
    return found


def _beside_or_here(
    scope: _Scope, embedding: Future[list[float]], beside: Future[tuple[str, list[Candidate]]] | None, *, fused: bool
) -> tuple[str, list[Candidate]]:
    """The vector retriever's answer: from beside, or read here when it could not run there or failed
    on its connection (the embedding's own failure is the caller's to handle)."""
    if beside is not None:
        try:
            with timed(SEARCH_STAGE_SECONDS, stage="beside"):  # what is left of it once the keywords are in
                return beside.result()
        except DatabaseError:
            logger.warning("the vector retriever failed on its own connection; reading on the request's", exc_info=True)
    return _vector_hits(scope, embedding, fused=fused)


# --- page and hydrate ----------------------------------------------------------------------------


def _page(scope: _Scope, ranked: list[Candidate], *, fused: bool) -> tuple[list[Candidate], bool, BelowFloor | None]:
    """The ranked candidates after the cursor, up to the limit (fused: then the unscored tail); and,
    when the floor left nothing for the first page, what it left out."""
    candidates = {c.pk: c for c in ranked}
    below_floor = None
    if scope.floor > 0:
        kept = [c for c in ranked if c.score >= scope.floor]
        if not kept and scope.position is None:
            below_floor = _below_floor(ranked)
        ranked = kept
    fused = fused and scope.floor <= 0  # only with no floor does the unscored tail follow
    if fused:
        ranked = [c for c in ranked if round(-c.relevance, 12) < 0]  # relevance above 0, as comparable() rounds it
    scored = [c.pk for c in ranked]
    after = scope.position.key if scope.position else None
    if after is not None:
        ranked = [c for c in ranked if comparable(c.sort_key()) > after]
    limit = scope.limit
    page = ranked[: limit + 1]
    if fused and len(page) <= limit:
        tail = _unscored(scope.queryset, exclude=scored, after=after, count=limit + 1 - len(page))
        page += [candidates.get(c.pk, c) for c in tail]
    return page[:limit], len(page) > limit, below_floor


def _below_floor(cut: list[Candidate]) -> BelowFloor | None:
    """The candidates the ranking scored, all under the floor. A legacy fusion's candidates past the
    model's pool carry no features: the model never scored them, so they are not counted."""
    scored = [c.score for c in cut if c.features is not None]
    if not scored:
        return None
    return BelowFloor(count=len(scored), best_score=round(max(scored), 6))


def _unscored(scope: QuerySet[Memory], *, exclude: list[Any], after: SortKey | None, count: int) -> list[Candidate]:
    """The tail of a hybrid result: memories neither retriever scored above 0, most important and newest first."""
    queryset = scope.exclude(pk__in=exclude)
    if after is not None and after[0] >= 0:  # the previous page already ended in this tail
        importance, created_at, pk = -after[1], EPOCH + timedelta(microseconds=-after[2]), after[3]
        queryset = queryset.filter(
            Q(importance__lt=importance)
            | Q(importance=importance, created_at__lt=created_at)
            | Q(importance=importance, created_at=created_at, pk__gt=pk)
        )
    rows = queryset.order_by("-importance", "-created_at", "pk").values_list("pk", "importance", "created_at")
    return [Candidate(pk=pk, importance=importance, created=micros(moment)) for pk, importance, moment in rows[:count]]


def _hydrate(page: list[Candidate]) -> list[SearchHit]:
    memories = hit_memories([c.pk for c in page])
    return [
        SearchHit(
            memory=memories[c.pk],
            relevance=round(c.relevance, 6),
            vector_similarity=None if c.similarity is None else round(c.similarity, 6),
            keyword_score=None if c.keyword is None else round(c.keyword, 6),
            score=round(c.score, 6),
        )
        for c in page
        if c.pk in memories
    ]


def _browse(principal: Principal, params: SearchParams, *, counts_as_read: bool) -> SearchPage:
    """No query: the memory list's page (importance then recency), with the search's fingerprint."""
    page = memory_page(
        principal,
        filters=params.filters,
        limit=params.limit or MAX_RESULTS,
        cursor=params.cursor,
        fingerprint=params.fingerprint(),
    )
    if counts_as_read:
        record_access([memory.pk for memory in page.items])
    return SearchPage(
        hits=[SearchHit(memory=memory) for memory in page.items], next_cursor=page.next_cursor, mode=params.mode
    )
