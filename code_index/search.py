"""Code search: the organization's chunks, narrowed by repository, language, path glob and chunk
type; candidates by meaning (pgvector over the chunks' embeddings) and by words (BM25 over content,
identifiers and path); ranked by the memory search's own fusion (memories.search.fusion.fuse): a
weighted sum of the two scores, each scaled per query."""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import ExpressionWrapper, F, FloatField, Max, QuerySet, Sum, Value
from django.db.models.expressions import RawSQL
from pgvector.django import CosineDistance

from code_index.chunking import ChunkType
from code_index.keywords import keyword_text
from code_index.languages import LANGUAGES
from code_index.models import CodeChunk, CodeIndex
from memories.embeddings import EmbeddingError, get_provider, query_vector
from memories.fields import vector_text
from memories.search.caches import documents_holding, quote_lexeme
from memories.search.fusion import fuse
from memories.search.keyword import query_lexemes, selecting_lexemes
from memories.search.params import Candidate, SearchMode, SearchParams
from memory_platform import pagination
from memory_platform.exceptions import SearchUnavailable, ValidationError
from organizations.principal import Principal
from organizations.selectors import repository_named

MAX_LIMIT = 100
DEFAULT_LIMIT = 10
MAX_QUERY_CHARS = 2000
GLOB_MAX_CHARS = 500
# Okapi BM25 over the stored tsvector (as memories.search.keyword, with the textbook parameters:
# chunks vary in length far more than memories do). Parameters: average length, lexemes, IDFs.
K1, B = 1.2, 0.75
_BM25_SQL = f"""
(SELECT coalesce(sum(
    q.idf * cardinality(t.positions) * {K1 + 1}
    / (cardinality(t.positions) + {K1} * ({1 - B} + {B} * length("code_index_codechunk"."search_vector") / %s))
  ), 0)
 FROM unnest("code_index_codechunk"."search_vector") AS t
 JOIN unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) ON q.lexeme = t.lexeme)
"""  # noqa: S608 - constants only
# Past this many matching chunks, ts_rank picks which ones BM25 scores.
PRE_RANK = 300


def _choice(value: object, choices: list[str] | tuple[str, ...], field: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value not in choices:
        raise ValidationError(f"unknown {field} {value!r}; use one of: {', '.join(choices)}", details={"field": field})
    return value


@dataclass(frozen=True)
class CodeSearchParams:
    query: str
    repository: str | None = None
    language: str | None = None
    path: str | None = None
    chunk_type: str | None = None
    limit: int = DEFAULT_LIMIT
    mode: SearchMode = SearchMode.HYBRID

    @classmethod
    def build(cls, **values: Any) -> CodeSearchParams:
        """Raw interface input, checked: every bad value gets a message naming it."""
        query = values.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ValidationError(
                "query must be a non-empty text: what the code does, or its names", details={"field": "query"}
            )
        if "\x00" in query:
            raise ValidationError("query must not contain NUL characters", details={"field": "query"})
        if len(query) > MAX_QUERY_CHARS:
            raise ValidationError(f"query is longer than {MAX_QUERY_CHARS} characters", details={"field": "query"})
        limit = values.get("limit")
        limit = DEFAULT_LIMIT if limit is None else limit
        pagination.check_limit(limit, MAX_LIMIT)
        path = values.get("path") or None
        if path is not None and (not isinstance(path, str) or len(path) > GLOB_MAX_CHARS or "\x00" in path):
            raise ValidationError(
                f"path must be a glob over file paths of at most {GLOB_MAX_CHARS} characters, e.g. src/**/*.py",
                details={"field": "path"},
            )
        repository = values.get("repository") or None
        if repository is not None and (not isinstance(repository, str) or "\x00" in repository):
            raise ValidationError("repository must be a repository's slug", details={"field": "repository"})
        return cls(
            query=query.strip(),
            repository=repository,
            language=_choice(values.get("language"), LANGUAGES, "language"),
            path=path,
            chunk_type=_choice(values.get("chunk_type"), ChunkType.values, "chunk_type"),
            limit=limit,
            mode=SearchMode(_choice(values.get("mode"), [m.value for m in SearchMode], "mode") or SearchMode.HYBRID),
        )


@dataclass(frozen=True)
class CodeHit:
    chunk: CodeChunk
    score: float
    content: str  # trimmed to CODE_SEARCH_CONTENT_MAX_CHARS
    truncated: bool


@dataclass(frozen=True)
class CodeSearchResult:
    hits: list[CodeHit]
    # Set when hybrid search ran on keywords alone because the embedding provider was down.
    degraded: str | None = None


def glob_regex(pattern: str) -> str:
    """A PostgreSQL regular expression for a path glob: ``*`` within a directory, ``**`` across
    them, ``?`` one character. Without a ``/`` it matches a file name at any depth (``*.py``); a
    glob that names a directory matches everything under it (``src/api``, ``docs/``)."""
    glob = pattern.strip().removeprefix("./")
    anchored = "/" in glob.rstrip("/")
    glob = glob.strip("/")
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = glob[i]
        out.append({"*": "[^/]*", "?": "[^/]"}.get(char) or re.escape(char))
        i += 1
    return ("^" if anchored else "^(.*/)?") + "".join(out) + "(/.*)?$"


# --- scope ----------------------------------------------------------------------------------------------


def _scope(principal: Principal, params: CodeSearchParams) -> QuerySet[CodeChunk]:
    scope = CodeChunk.objects.filter(organization=principal.organization)
    if params.repository is not None:
        repository = repository_named(principal, params.repository)
        if not CodeIndex.objects.filter(repository=repository).exists():
            raise ValidationError(
                f"repository '{repository.slug}' has no code index yet: index it with code-index first",
                details={"field": "repository"},
            )
        scope = scope.filter(repository=repository)
    if params.language is not None:
        scope = scope.filter(language=params.language)
    if params.chunk_type is not None:
        scope = scope.filter(chunk_type=params.chunk_type)
    if params.path is not None:
        scope = scope.filter(path__regex=glob_regex(params.path))
    return scope


class _Statistics:
    """Per-organization chunk counts for BM25's IDF. Document frequencies are kept until an index
    of the organization changes (its totals are refreshed at the end of every run)."""

    max_entries = 100_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._df: dict[tuple[int, datetime | None, str], int] = {}

    def corpus(self, organization_id: int) -> tuple[int, float, datetime | None]:
        totals = CodeIndex.objects.filter(organization_id=organization_id).aggregate(
            chunks=Sum("chunk_count"), lexemes=Sum("lexeme_total"), stamp=Max("updated_at")
        )
        chunks, lexemes = totals["chunks"] or 0, totals["lexemes"] or 0
        return chunks, (lexemes / chunks if chunks else 1.0), totals["stamp"]

    def frequencies(self, organization_id: int, stamp: datetime | None, lexemes: list[str]) -> dict[str, int]:
        with self._lock:
            found = {lx: self._df[key] for lx in lexemes if (key := (organization_id, stamp, lx)) in self._df}
        missing = [lx for lx in lexemes if lx not in found]
        if missing:
            rows = documents_holding("code_index_codechunk", organization_id, missing)
            with self._lock:
                if len(self._df) > self.max_entries:
                    self._df.clear()
                for lexeme, count in rows:
                    found[lexeme] = self._df[(organization_id, stamp, lexeme)] = int(count)
        return found


statistics = _Statistics()


# --- retrievers -------------------------------------------------------------------------------------------


def keyword_candidates(
    scope: QuerySet[CodeChunk], organization_id: int, query: str, k: int
) -> tuple[list[Candidate], float | None]:
    """BM25's best ``k`` chunks, and the score floor for scaling when common terms were left out."""
    lexemes, _ = query_lexemes(keyword_text(query) or query)
    if not lexemes:
        return [], None
    count, average, stamp = statistics.corpus(organization_id)
    frequencies = statistics.frequencies(organization_id, stamp, lexemes)
    total = max(count, max(frequencies.values(), default=0), 1)
    idf = [math.log(1 + (total - frequencies.get(lx, 0) + 0.5) / (frequencies.get(lx, 0) + 0.5)) for lx in lexemes]
    selection = selecting_lexemes(lexemes, frequencies, total, idf)
    any_term = SearchQuery(" | ".join(quote_lexeme(lx) for lx in selection.lexemes), search_type="raw", config="simple")
    matching = scope.filter(search_vector=any_term)
    if sum(frequencies.get(lx, 0) for lx in selection.lexemes) > max(PRE_RANK, 3 * k):
        weight = dict(zip(lexemes, idf, strict=True))
        estimate = sum(
            (
                Value(weight[lx])
                * SearchRank(F("search_vector"), SearchQuery(quote_lexeme(lx), search_type="raw", config="simple"))
                for lx in selection.lexemes
            ),
            start=Value(0.0),
        )
        ranked = matching.annotate(pre_rank=ExpressionWrapper(estimate, output_field=FloatField()))
        matching = CodeChunk.objects.filter(pk__in=ranked.order_by("-pre_rank").values("pk")[: max(PRE_RANK, 3 * k)])
    bm25 = RawSQL(_BM25_SQL, [max(average, 1.0), lexemes, idf], output_field=FloatField())  # noqa: S611
    rows = list(matching.annotate(bm25=bm25).order_by("-bm25", "pk").values_list("pk", "bm25")[:k])
    candidates = [
        Candidate(pk=pk, importance=1, created=0, keyword=score, keyword_rank=rank)
        for rank, (pk, score) in enumerate(rows, start=1)
    ]
    floor = selection.left_out_score if len(rows) < settings.SEARCH_CANDIDATES else None
    return candidates, floor


def _small(scope: QuerySet[CodeChunk], organization_id: int) -> bool:
    limit = settings.SEARCH_EXACT_SCAN_LIMIT
    chunks, _, _ = statistics.corpus(organization_id)
    if chunks <= limit:
        return True
    return bool(scope.values("pk").order_by()[: limit + 1].count() <= limit)


def vector_candidates(scope: QuerySet[CodeChunk], organization_id: int, vector: list[float], k: int) -> list[Candidate]:
    """The ``k`` nearest chunks: an exact scan of a small scope, else the HNSW graph scanned on
    (pgvector's iterative scan) until enough rows pass the organization and the filters."""
    distance = CosineDistance("embedding", Value(vector_text(vector)))
    # Only vectors of the model that embedded the query compare with it.
    embedded = scope.filter(embedding__isnull=False, embedding_model=get_provider().name)
    small = _small(scope, organization_id)
    with transaction.atomic():
        if small:
            ordering: Any = ExpressionWrapper(distance + Value(0.0), output_field=FloatField())
        else:
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cursor.execute("SET LOCAL hnsw.ef_search = %s", [max(settings.SEARCH_HNSW_EF_SEARCH, k)])
            ordering = distance
        rows = list(embedded.annotate(distance=distance).order_by(ordering).values_list("pk", "distance")[:k])
    rows.sort(key=lambda row: (row[1], row[0]))  # relaxed_order may return rows slightly out of order
    return [
        Candidate(pk=pk, importance=1, created=0, similarity=1.0 - distance, vector_rank=rank)
        for rank, (pk, distance) in enumerate(rows, start=1)
    ]


# --- the search ------------------------------------------------------------------------------------------


def _trimmed(content: str) -> tuple[str, bool]:
    limit = settings.CODE_SEARCH_CONTENT_MAX_CHARS
    if len(content) <= limit:
        return content, False
    cut = content.rfind("\n", 0, limit)
    return content[: cut if cut > limit // 2 else limit], True


def code_search(principal: Principal, params: CodeSearchParams) -> CodeSearchResult:
    """The best chunks for the query among those of the principal's organization."""
    scope = _scope(principal, params)
    organization_id = principal.organization.pk
    pool = max(settings.SEARCH_CANDIDATES, 5 * params.limit)
    mode = params.mode
    keyword_hits: list[Candidate] = []
    vector_hits: list[Candidate] = []
    floor: float | None = None
    degraded = None
    if mode in (SearchMode.HYBRID, SearchMode.KEYWORD):
        keyword_hits, floor = keyword_candidates(scope, organization_id, params.query, pool)
    if mode in (SearchMode.HYBRID, SearchMode.VECTOR):
        try:
            vector = query_vector(params.query)
        except EmbeddingError as error:
            if mode == SearchMode.VECTOR:
                raise SearchUnavailable(
                    f"semantic search is unavailable right now ({error}); retry later or use keyword mode"
                ) from error
            degraded = f"embedding provider unavailable, keyword results only: {error}"
            mode = SearchMode.KEYWORD
        else:
            vector_hits = vector_candidates(scope, organization_id, vector, pool)
    fused = mode == SearchMode.HYBRID
    weights = SearchParams(
        vector_weight=settings.CODE_SEARCH_VECTOR_WEIGHT, keyword_weight=settings.CODE_SEARCH_KEYWORD_WEIGHT
    )
    ranked, _ = fuse(vector_hits, keyword_hits, weights, scales=None, clamp=fused, keyword_floor=floor)
    if fused:
        ranked = [candidate for candidate in ranked if candidate.relevance > 0]
    best = ranked[: params.limit]
    chunks = (
        CodeChunk.objects.select_related("repository")
        .defer("embedding", "search_vector")
        .in_bulk([candidate.pk for candidate in best])
    )
    hits = []
    for candidate in best:
        chunk = chunks.get(candidate.pk)
        if chunk is not None:
            content, truncated = _trimmed(chunk.content)
            hits.append(CodeHit(chunk, round(candidate.relevance, 4), content, truncated))
    return CodeSearchResult(hits=hits, degraded=degraded)
