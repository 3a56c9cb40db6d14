"""Hybrid search: the one retrieval pipeline every interface uses.

1. Scope: only memories the principal may see, narrowed by the caller's filters.
2. Candidates from two retrievers over that scope:
   - vector: cosine distance on the HNSW index, with pgvector's iterative scan so a filtered
     query still returns its full top-k; small scopes are searched exactly instead;
   - keyword: PostgreSQL full text (any query term may match), scored with BM25. PostgreSQL's
     ``ts_rank`` has no inverse document frequency, so we compute Okapi BM25 ourselves from the
     stored tsvector (term frequencies) and per-organization document frequencies. In a large
     organization the rarer query terms pick the candidates (within a budget of rows to score)
     and, past a few hundred matches, an IDF-weighted ts_rank picks which of them BM25 scores;
     every query term still counts in each candidate's score.
3. Fusion: a weighted sum of the two retrievers' scores, each min-max scaled per query
   (weighted reciprocal-rank fusion is available too), or one retriever alone.
4. Optional boosts by importance and recency.
5. Order: relevance, then importance (desc), then created_at (desc); keyset cursor pagination.
   A cursor carries the first page's score scales, so a write between pages cannot shift scores
   under it. In hybrid mode a memory below both retrievers' best candidates scores 0, and those
   follow the scored ones in importance-then-recency order, so paging reaches the whole scope.
With no query, the order is importance then recency over the same filtered scope.
"""

from __future__ import annotations

import enum
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import ExpressionWrapper, F, FloatField, Q, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.utils import timezone
from pgvector.django import CosineDistance

from memories.access import record_access
from memories.embeddings import EmbeddingError, get_provider
from memories.fields import vector_text
from memories.models import FULL_TEXT_CONFIG, Memory
from memories.selectors import MemoryFilters, memory_filter, memory_page, memory_visible_queryset
from memory_platform import pagination
from memory_platform.exceptions import SearchUnavailable, ValidationError
from memory_platform.pagination import decode_cursor as _decode_cursor
from memory_platform.pagination import encode_cursor as _encode_cursor
from memory_platform.pagination import invalid_cursor as _invalid_cursor
from memory_platform.pagination import is_uuid as _is_uuid
from memory_platform.pagination import is_whole as _is_whole
from organizations.principal import Principal

MAX_RESULTS = 1000
HIT_DEFERRED_FIELDS = ("embedding", "search_vector")
MAX_QUERY_CHARS = 2000
RRF_K = 60


class SearchMode(enum.StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    KEYWORD = "keyword"


class Fusion(enum.StrEnum):
    # Weighted sum of each retriever's scores, min-max scaled per query. On LoCoMo it beats
    # reciprocal-rank fusion clearly (R@10 0.694 against 0.646 at their best weights), because
    # it keeps how far ahead a candidate is, not just its place.
    SCORE = "score"
    RRF = "rrf"  # weighted reciprocal-rank fusion


@dataclass(frozen=True)
class SearchParams:
    query: str = ""
    mode: SearchMode = SearchMode.HYBRID
    filters: MemoryFilters = field(default_factory=MemoryFilters)
    limit: int | None = 20
    cursor: str | None = None
    vector_weight: float | None = None
    keyword_weight: float | None = None
    importance_boost: float = 0.0
    recency_boost: float = 0.0
    fusion: Fusion | None = None

    @classmethod
    def build(cls, **values: Any) -> SearchParams:
        """Validate raw interface input; every bad value gets a message naming it."""
        query = values.get("query") or ""
        if not isinstance(query, str):
            raise ValidationError("query must be text", details={"field": "query"})
        if len(query) > MAX_QUERY_CHARS:
            raise ValidationError(f"query is longer than {MAX_QUERY_CHARS} characters", details={"field": "query"})
        mode = values.get("mode") or SearchMode.HYBRID
        if mode not in SearchMode.__members__.values():
            raise ValidationError(
                f"unknown mode '{mode}'; use one of: {', '.join(m.value for m in SearchMode)}",
                details={"field": "mode"},
            )
        limit = values.get("limit", 20)
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS
        ):
            raise ValidationError(f"limit must be a whole number from 1 to {MAX_RESULTS}", details={"field": "limit"})
        numbers = {}
        for name in ("vector_weight", "keyword_weight", "importance_boost", "recency_boost"):
            value = values.get(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
                raise ValidationError(f"{name} must be a number from 0 to 100", details={"field": name})
            numbers[name] = float(value)
        fusion = values.get("fusion")
        if fusion is not None and fusion not in Fusion.__members__.values():
            raise ValidationError(
                f"unknown fusion '{fusion}'; use one of: {', '.join(f.value for f in Fusion)}",
                details={"field": "fusion"},
            )
        filters = values.get("filters")
        cursor = values.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise ValidationError("cursor must be the text returned as next_cursor", details={"field": "cursor"})
        return cls(
            query=query.strip(),
            mode=SearchMode(mode),
            filters=filters if isinstance(filters, MemoryFilters) else MemoryFilters.from_mapping(filters),
            limit=limit,
            cursor=cursor or None,
            fusion=Fusion(fusion) if fusion else None,
            **numbers,
        )

    def fingerprint(self) -> str:
        payload = asdict(self)
        payload.pop("cursor")
        return pagination.fingerprint(payload)


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    relevance: float | None = None
    vector_similarity: float | None = None
    keyword_score: float | None = None


@dataclass(frozen=True)
class SearchPage:
    hits: list[SearchHit]
    next_cursor: str | None
    mode: SearchMode
    # Set when hybrid search ran on keywords alone because the embedding provider was down.
    degraded: str | None = None


# (-relevance, -importance, -created_at in whole microseconds, id): ascending is result order.
SortKey = tuple[float, int, int, str]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(moment: datetime) -> int:
    # Whole microseconds survive JSON exactly; a float timestamp may not.
    return (moment - _EPOCH) // timedelta(microseconds=1)


@dataclass
class _Candidate:
    pk: Any
    importance: int
    created_at: datetime
    similarity: float | None = None
    keyword: float | None = None
    vector_rank: int | None = None
    keyword_rank: int | None = None
    relevance: float = 0.0

    def sort_key(self) -> SortKey:
        return (-self.relevance, -self.importance, -_micros(self.created_at), str(self.pk))


# --- cursors -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Position:
    """Where the previous page ended, and what the next page reuses to continue it exactly."""

    key: SortKey
    scales: tuple[float, float, float, float] | None
    seen: int


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _search_position(cursor: str, fingerprint: str) -> _Position:
    # A cursor is opaque but readable: check every part, so a tampered one is refused, not a crash.
    payload = _decode_cursor(cursor, fingerprint)
    key, scales, seen = payload["k"], payload.get("s"), payload.get("n")
    if not (
        len(key) == 4 and _is_number(key[0]) and _is_whole(key[1]) and _is_whole(key[2]) and _is_uuid(key[3])
    ) or not (isinstance(scales, list) and len(scales) == 4 and all(_is_number(x) for x in scales)):
        raise _invalid_cursor()
    if not isinstance(seen, int) or isinstance(seen, bool) or seen < 0:
        raise _invalid_cursor()
    low_v, spread_v, low_k, spread_k = (float(x) for x in scales)
    return _Position(key=(float(key[0]), key[1], key[2], key[3]), scales=(low_v, spread_v, low_k, spread_k), seen=seen)


# --- retrievers --------------------------------------------------------------------------------


class _ScopeSizes:
    """Whether a search scope is small enough to scan exactly, remembered briefly per organization.

    Counting up to ``SEARCH_EXACT_SCAN_LIMIT + 1`` rows of a large tenant costs ~10 ms a search;
    the answer changes only when memories are written, so it is kept for ``ttl_seconds`` and
    dropped for an organization whenever this process writes one of its memories (other
    processes' writes show after the TTL; a stale answer only picks the other, still correct, path).
    """

    ttl_seconds = 60.0
    max_entries = 10_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[tuple[Any, ...], tuple[float, int, bool]] = {}
        self._generations: dict[int, int] = {}

    def is_small(self, organization_id: int | None, embedded: QuerySet[Memory], limit: int) -> bool:
        counted = embedded.values("pk").order_by()  # no ORDER BY: the model's ordering would sort the scope
        if organization_id is None:
            return bool(counted[: limit + 1].count() <= limit)
        sql, params = counted.query.sql_with_params()
        key = (organization_id, limit, sql, tuple(str(p) for p in params))
        now = time.monotonic()
        with self._lock:
            generation = self._generations.get(organization_id, 0)
            cached = self._answers.get(key)
        if cached and cached[1] == generation and now - cached[0] < self.ttl_seconds:
            return cached[2]
        small = bool(counted[: limit + 1].count() <= limit)
        with self._lock:
            if len(self._answers) >= self.max_entries:
                self._answers.clear()
            self._answers[key] = (now, generation, small)
        return small

    def invalidate(self, organization_id: int) -> None:
        with self._lock:
            self._generations[organization_id] = self._generations.get(organization_id, 0) + 1

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()
            self._generations.clear()


scope_sizes = _ScopeSizes()


def memories_changed(organization_id: int) -> None:
    """Called by the services after writing an organization's memories: forget its scope sizes."""
    scope_sizes.invalidate(organization_id)
    # Another thread may count the old state before this transaction commits: forget again then.
    transaction.on_commit(lambda: scope_sizes.invalidate(organization_id))


def _vector_candidates(
    scope: QuerySet[Memory], vector: list[float], k: int, *, organization_id: int | None = None
) -> list[_Candidate]:
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
    rows.sort(key=lambda row: (row[3], -row[1], -_micros(row[2]), str(row[0])))
    return [
        _Candidate(pk=pk, importance=importance, created_at=created_at, similarity=1.0 - dist, vector_rank=rank)
        for rank, (pk, importance, created_at, dist) in enumerate(rows, start=1)
    ]


class _TermStatistics:
    """Per-organization document counts for BM25's IDF, cached briefly (they drift slowly)."""

    ttl_seconds = 300.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._corpus: dict[int, tuple[float, int, float]] = {}
        self._df: dict[tuple[int, str], tuple[float, int]] = {}

    def corpus(self, organization_id: int) -> tuple[int, float]:
        now = time.monotonic()
        with self._lock:
            cached = self._corpus.get(organization_id)
        if cached and now - cached[0] < self.ttl_seconds:
            return cached[1], cached[2]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*), coalesce(avg(length(search_vector)), 1) FROM memories_memory "
                "WHERE organization_id = %s AND deleted_at IS NULL",
                [organization_id],
            )
            count, avg_length = cursor.fetchone()
        with self._lock:
            self._corpus[organization_id] = (now, int(count), float(avg_length))
        return int(count), float(avg_length)

    def document_frequencies(self, organization_id: int, lexemes: list[str]) -> dict[str, int]:
        now = time.monotonic()
        result: dict[str, int] = {}
        missing: list[str] = []
        with self._lock:
            for lexeme in lexemes:
                cached = self._df.get((organization_id, lexeme))
                if cached and now - cached[0] < self.ttl_seconds:
                    result[lexeme] = cached[1]
                else:
                    missing.append(lexeme)
        if missing:
            # One index-assisted count per term, in a single round trip.
            parts = " UNION ALL ".join(
                "SELECT %s, count(*) FROM memories_memory WHERE organization_id = %s AND deleted_at IS NULL "
                "AND search_vector @@ to_tsquery('simple', %s)"
                for _ in missing
            )
            params: list[Any] = []
            for lexeme in missing:
                params += [lexeme, organization_id, _quote_lexeme(lexeme)]
            with connection.cursor() as cursor:
                cursor.execute(parts, params)
                rows = cursor.fetchall()
            with self._lock:
                for lexeme, count in rows:
                    result[lexeme] = int(count)
                    self._df[(organization_id, lexeme)] = (now, int(count))
                if len(self._df) > 200_000:
                    self._df.clear()
        return result

    def clear(self) -> None:
        with self._lock:
            self._corpus.clear()
            self._df.clear()


term_statistics = _TermStatistics()


def _quote_lexeme(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _query_lexemes(query: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY lexeme", [FULL_TEXT_CONFIG, query]
        )
        return [row[0] for row in cursor.fetchall()]


# Okapi BM25 over the stored tsvector: term frequency from each lexeme's positions, document
# length from its lexeme count. k1 = 0.9, b = 0.4 suit short memories (on LoCoMo they beat the
# textbook 1.2 / 0.75 by 0.015 R@10 alone, 0.013 fused). Parameters: average length, lexemes, IDFs.
_BM25_SQL = """
(SELECT coalesce(sum(
    q.idf * cardinality(t.positions) * 1.9
    / (cardinality(t.positions) + 0.9 * (0.6 + 0.4 * length("memories_memory"."search_vector") / %s))
  ), 0)
 FROM unnest("memories_memory"."search_vector") AS t
 JOIN unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) ON q.lexeme = t.lexeme)
"""


# How many memories BM25 scores for one query: about KEYWORD_SCORED_ROWS. Scoring costs ~10 us a
# matching memory, and in a large organization a common term matches thousands (one stem matched
# 9.2k of 49k rows: 118 ms). So query terms pick candidates rarest first, while the memories they
# match stay within that budget; the more common ones left over still count in the score of every
# candidate, they just do not bring in memories that match nothing rarer (those score low anyway).
# A term in at most RARE_TERM_SHARE of the organization's memories always picks candidates. In a
# small organization every term does: LoCoMo's conversations (~550 memories) are ranked as before.
KEYWORD_SCORED_ROWS = 600
RARE_TERM_SHARE = 0.01
# When the selecting terms still match more memories than this (or 3x the candidates wanted),
# ts_rank picks that many first and BM25 ranks them: a rare term can match over a thousand.
KEYWORD_PRE_RANK = 300


@dataclass(frozen=True)
class _KeywordSelection:
    lexemes: list[str]
    # Left out: an estimate of the best score a memory matching only them would have had (each
    # once, at average length: the sum of their IDFs). It stands in for the weakest of the best
    # candidates when scaling scores, which would otherwise be one of those memories.
    left_out_score: float | None = None


def _selecting_lexemes(
    lexemes: list[str], frequencies: dict[str, int], total: int, idf: list[float]
) -> _KeywordSelection:
    """The query terms whose matches become keyword candidates."""
    weights = dict(zip(lexemes, idf, strict=True))
    matched = sorted((frequencies[lx], lx) for lx in lexemes if frequencies.get(lx, 0) > 0)
    selecting: list[str] = []
    left_out: list[str] = []
    rows = 0
    for frequency, lexeme in matched:
        if not selecting or frequency <= RARE_TERM_SHARE * total or rows + frequency <= KEYWORD_SCORED_ROWS:
            selecting.append(lexeme)
            rows += frequency
        else:
            left_out.append(lexeme)
    if not left_out:
        return _KeywordSelection(lexemes)
    return _KeywordSelection(selecting, left_out_score=sum(weights[lx] for lx in left_out))


def _keyword_candidates(
    scope: QuerySet[Memory], organization_id: int, query: str, k: int, *, at_least: int = 0
) -> tuple[list[_Candidate], float | None]:
    """BM25's best ``k``, and the score floor for scaling when common terms were left out (see above).

    When the rarer terms' matches number fewer than ``at_least``, the common terms pick candidates
    too: a keyword search pages through every memory matching any term.
    """
    lexemes = _query_lexemes(query)
    if not lexemes:
        return [], None
    count, avg_length = term_statistics.corpus(organization_id)
    frequencies = term_statistics.document_frequencies(organization_id, lexemes)
    total = max(count, 1)
    idf = [math.log(1 + (total - frequencies.get(lx, 0) + 0.5) / (frequencies.get(lx, 0) + 0.5)) for lx in lexemes]
    bm25 = RawSQL(_BM25_SQL, [max(avg_length, 1.0), lexemes, idf], output_field=FloatField())  # noqa: S611

    def best(selecting: list[str]) -> list[tuple[Any, int, datetime, float]]:
        any_term = SearchQuery(" | ".join(_quote_lexeme(lx) for lx in selecting), search_type="raw", config="simple")
        matching = scope.filter(search_vector=any_term)
        pre_rank = max(KEYWORD_PRE_RANK, 3 * k)
        if sum(frequencies.get(lx, 0) for lx in selecting) > pre_rank:
            # Many matches: BM25 (a subquery a row) scores only the best by each term's ts_rank
            # (C, length-normalised) weighted by the term's IDF.
            weight = dict(zip(lexemes, idf, strict=True))
            estimate = sum(
                (
                    Value(weight[lx])
                    * SearchRank(
                        F("search_vector"),
                        SearchQuery(_quote_lexeme(lx), search_type="raw", config="simple"),
                        normalization=1,
                    )
                    for lx in selecting
                ),
                start=Value(0.0),
            )
            ranked = matching.annotate(pre_rank=ExpressionWrapper(estimate, output_field=FloatField()))
            matching = Memory.objects.filter(pk__in=ranked.order_by("-pre_rank").values("pk")[:pre_rank])
        return list(
            matching.annotate(bm25=bm25)
            .order_by("-bm25", "-importance", "-created_at", "pk")
            .values_list("pk", "importance", "created_at", "bm25")[:k]
        )

    selection = _selecting_lexemes(lexemes, frequencies, total, idf)
    rows = best(selection.lexemes)
    if selection.left_out_score is not None and len(rows) < at_least:
        selection = _KeywordSelection(lexemes)
        rows = best(lexemes)
    candidates = [
        _Candidate(pk=pk, importance=importance, created_at=created_at, keyword=score, keyword_rank=rank)
        for rank, (pk, importance, created_at, score) in enumerate(rows, start=1)
    ]
    # With enough candidates from the rarer terms, the best of them are what scaling looks at anyway.
    floor = selection.left_out_score if len(rows) < settings.SEARCH_CANDIDATES else None
    return candidates, floor


# --- pipeline ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _MinMax:
    """Scales one retriever's scores to [0, 1] by its best ``SEARCH_CANDIDATES`` for this query.

    A candidate it missed scores 0. Scaling by a fixed number of best candidates, not by however
    many a page fetched, gives a memory the same relevance whatever the limit. When the best all
    score alike (above all, a lone keyword match), each is the best: 1, not 0, or an identifier
    only one memory contains would count for nothing. Weaker scores go below 0, or stop at 0 when
    clamped (hybrid), where a weak match counts as a miss.
    """

    low: float
    spread: float
    clamp: bool

    @classmethod
    def over(cls, ranked_scores: list[float | None], *, clamp: bool, floor: float | None = None) -> _MinMax:
        best = [score for score in ranked_scores[: settings.SEARCH_CANDIDATES] if score is not None]
        low = min(best, default=0.0)
        if floor is not None and best:
            low = min(low, floor)
        return cls(low=low, spread=max(best, default=0.0) - low, clamp=clamp)

    def __call__(self, score: float | None) -> float:
        if score is None:
            return 0.0
        if self.spread <= 0:  # the best all scored alike
            return 1.0 if score >= self.low else (0.0 if self.clamp else score - self.low)
        scaled = (score - self.low) / self.spread
        return max(scaled, 0.0) if self.clamp else scaled


def _fuse(
    vector_hits: list[_Candidate],
    keyword_hits: list[_Candidate],
    params: SearchParams,
    *,
    scales: tuple[float, float, float, float] | None,
    clamp: bool,
    keyword_floor: float | None = None,
) -> tuple[list[_Candidate], tuple[float, float, float, float]]:
    """Rank the merged candidates; also return the score scales used, for the next page's cursor."""
    vector_weight = settings.SEARCH_VECTOR_WEIGHT if params.vector_weight is None else params.vector_weight
    keyword_weight = settings.SEARCH_KEYWORD_WEIGHT if params.keyword_weight is None else params.keyword_weight
    merged: dict[Any, _Candidate] = {}
    for candidate in vector_hits:
        merged[candidate.pk] = candidate
    for candidate in keyword_hits:
        existing = merged.get(candidate.pk)
        if existing is None:
            merged[candidate.pk] = candidate
        else:
            existing.keyword, existing.keyword_rank = candidate.keyword, candidate.keyword_rank
    fusion = params.fusion or Fusion(settings.SEARCH_FUSION)
    if scales is None:
        vector_scale = _MinMax.over([c.similarity for c in vector_hits], clamp=clamp)
        keyword_scale = _MinMax.over([c.keyword for c in keyword_hits], clamp=clamp, floor=keyword_floor)
    else:
        vector_scale = _MinMax(low=scales[0], spread=scales[1], clamp=clamp)
        keyword_scale = _MinMax(low=scales[2], spread=scales[3], clamp=clamp)
    now = timezone.now()
    for candidate in merged.values():
        score = 0.0
        if fusion == Fusion.RRF:
            if candidate.vector_rank is not None:
                score += vector_weight / (RRF_K + candidate.vector_rank)
            if candidate.keyword_rank is not None:
                score += keyword_weight / (RRF_K + candidate.keyword_rank)
        else:
            score += vector_weight * vector_scale(candidate.similarity)
            score += keyword_weight * keyword_scale(candidate.keyword)
        boost = 1.0
        if params.importance_boost:
            boost *= 1 + params.importance_boost * (candidate.importance - 1) / 9
        if params.recency_boost:
            age_days = max((now - candidate.created_at).total_seconds() / 86400, 0.0)
            boost *= 1 + params.recency_boost * math.exp(-age_days / 30)
        # A boost lifts: a score below 0 (weaker than the best candidates) is divided by it.
        candidate.relevance = score * boost if score >= 0 else score / boost
    used = (vector_scale.low, vector_scale.spread, keyword_scale.low, keyword_scale.spread)
    return sorted(merged.values(), key=_Candidate.sort_key), used


def _pool_size(limit: int | None, seen: int = 0) -> int:
    """Candidates per retriever: enough for a good first page, and for every result up to the next."""
    if limit is None:
        return MAX_RESULTS
    return min(MAX_RESULTS, max(settings.SEARCH_CANDIDATES, 5 * limit, seen + limit + 1))


def _unscored(scope: QuerySet[Memory], *, exclude: list[Any], after: SortKey | None, count: int) -> list[_Candidate]:
    """The tail of a hybrid result: memories neither retriever scored above 0, most important and newest first."""
    queryset = scope.exclude(pk__in=exclude)
    if after is not None and after[0] >= 0:  # the previous page already ended in this tail
        importance, created_at, pk = -after[1], _EPOCH + timedelta(microseconds=-after[2]), after[3]
        queryset = queryset.filter(
            Q(importance__lt=importance)
            | Q(importance=importance, created_at__lt=created_at)
            | Q(importance=importance, created_at=created_at, pk__gt=pk)
        )
    rows = queryset.order_by("-importance", "-created_at", "pk").values_list("pk", "importance", "created_at")
    return [
        _Candidate(pk=pk, importance=importance, created_at=created_at) for pk, importance, created_at in rows[:count]
    ]


_query_embedder = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-embedding")


def _embed_and_retrieve(
    query: str, scope: QuerySet[Memory] | None, pool: int, organization_id: int
) -> tuple[list[float], list[_Candidate] | None]:
    """The query's vector, and with a scope its vector candidates (run in a worker thread)."""
    vector = get_provider().embed_one(query)
    if scope is None:
        return vector, None
    try:
        return vector, _vector_candidates(scope, vector, pool, organization_id=organization_id)
    finally:
        connection.close()  # back to the pool: this thread serves other searches next


def memory_search(principal: Principal, params: SearchParams) -> SearchPage:
    """Search what the principal may see. Raises SearchUnavailable if vector mode cannot embed."""
    if not params.query:
        return _browse(principal, params)
    fingerprint = params.fingerprint()
    position = _search_position(params.cursor, fingerprint) if params.cursor else None
    scope = memory_filter(
        memory_visible_queryset(principal, include_deleted=params.filters.include_deleted), params.filters
    )
    degraded = None
    vector: list[float] | None = None
    seen = position.seen if position else 0
    organization_id = principal.organization.pk
    # The query is embedded in a worker thread (the model runs outside the GIL) while the keyword
    # retriever waits on the database; with pooled connections that thread also runs the vector
    # retriever, on a connection of its own, so both candidate queries run at once. Not inside a
    # transaction: another connection would not see what it has not committed.
    in_parallel = bool(connection.settings_dict.get("OPTIONS", {}).get("pool")) and not connection.in_atomic_block
    embedding = (
        _query_embedder.submit(
            _embed_and_retrieve,
            params.query,
            scope if in_parallel else None,
            _pool_size(params.limit, 0 if params.mode == SearchMode.HYBRID else seen),
            organization_id,
        )
        if params.mode in (SearchMode.HYBRID, SearchMode.VECTOR)
        else None
    )

    def keyword_candidates(*, fused: bool) -> tuple[list[_Candidate], float | None]:
        # Fused, everything scoring above 0 is among the first page's candidates, and the tail
        # comes from _unscored; a single retriever ranks all it finds, so its pool grows page by
        # page, and keyword search alone pages through every match.
        pool = _pool_size(params.limit, 0 if fused else seen)
        at_least = 0 if fused else min(seen + (params.limit or MAX_RESULTS) + 1, pool)
        return _keyword_candidates(scope, organization_id, params.query, pool, at_least=at_least)

    keyword_hits: list[_Candidate] = []
    keyword_floor = None
    if params.mode in (SearchMode.HYBRID, SearchMode.KEYWORD):
        keyword_hits, keyword_floor = keyword_candidates(fused=params.mode == SearchMode.HYBRID)
    early_vector_hits = None
    if embedding is not None:
        try:
            vector, early_vector_hits = embedding.result()
        except EmbeddingError as error:
            if params.mode == SearchMode.VECTOR:
                raise SearchUnavailable(
                    f"semantic search is unavailable right now ({error}); retry later or use keyword search"
                ) from error
            degraded = f"embedding provider unavailable, keyword results only: {error}"
            keyword_hits, keyword_floor = keyword_candidates(fused=False)  # keywords alone after all
    fused = params.mode == SearchMode.HYBRID and vector is not None
    pool = _pool_size(params.limit, 0 if fused else seen)
    vector_hits = early_vector_hits if early_vector_hits is not None else []
    if vector is not None and early_vector_hits is None:
        vector_hits = _vector_candidates(scope, vector, pool, organization_id=organization_id)

    ranked, scales = _fuse(
        vector_hits,
        keyword_hits,
        params,
        scales=position.scales if position else None,
        clamp=fused,
        keyword_floor=keyword_floor,
    )
    candidates = {c.pk: c for c in ranked}
    if fused:
        ranked = [c for c in ranked if _comparable(c.sort_key())[0] < 0]  # relevance above 0
    scored = [c.pk for c in ranked]
    after = position.key if position else None
    if after is not None:
        ranked = [c for c in ranked if _comparable(c.sort_key()) > after]
    limit = params.limit or MAX_RESULTS
    page = ranked[: limit + 1]
    if fused and len(page) <= limit:
        tail = _unscored(scope, exclude=scored, after=after, count=limit + 1 - len(page))
        page += [candidates.get(c.pk, c) for c in tail]
    has_more = len(page) > limit
    page = page[:limit]
    # Not the vector and the tsvector: no interface shows them, and parsing 384 floats a hit costs.
    memories = (
        Memory.objects.select_related("organization", "repository", "owner")
        .defer(*HIT_DEFERRED_FIELDS)
        .in_bulk([c.pk for c in page])
    )
    hits = [
        SearchHit(
            memory=memories[c.pk],
            relevance=round(c.relevance, 6),
            vector_similarity=None if c.similarity is None else round(c.similarity, 6),
            keyword_score=None if c.keyword is None else round(c.keyword, 6),
        )
        for c in page
        if c.pk in memories
    ]
    next_cursor = None
    if has_more and page:
        key = _comparable(page[-1].sort_key())
        next_cursor = _encode_cursor(fingerprint, key, s=list(scales), n=seen + len(page))
    record_access([hit.memory.pk for hit in hits])
    return SearchPage(hits=hits, next_cursor=next_cursor, mode=params.mode, degraded=degraded)


def _comparable(key: SortKey) -> SortKey:
    # Round the relevance so a key survives its JSON round trip unchanged (and -0.0 is 0.0).
    return (round(key[0], 12) + 0.0, key[1], key[2], key[3])


def _browse(principal: Principal, params: SearchParams) -> SearchPage:
    """No query: the memory list's page (importance then recency), with the search's fingerprint."""
    page = memory_page(
        principal,
        filters=params.filters,
        limit=params.limit or MAX_RESULTS,
        cursor=params.cursor,
        fingerprint=params.fingerprint(),
    )
    record_access([memory.pk for memory in page.items])
    return SearchPage(
        hits=[SearchHit(memory=memory) for memory in page.items], next_cursor=page.next_cursor, mode=params.mode
    )
