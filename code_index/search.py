"""Code search: the organization's chunks, narrowed by repository, language, path glob and chunk
type; candidates by meaning (pgvector over the chunks' embeddings) and by words (BM25 over content,
identifiers and path), code_index.retrievers; scored by code_index.ranking's calibrated model, so a
result's ``score`` is the estimated probability that it is relevant, as a memory search's is; the
results under the floor (``min_score``, by default CODE_SEARCH_MIN_SCORE) are left out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from code_index.chunking import ChunkType
from code_index.languages import LANGUAGES
from code_index.models import CodeChunk, CodeIndex
from code_index.ranking import rank_hybrid, rank_keyword, rank_vector
from code_index.retrievers import CodeTerms, keyword_candidates, statistics, vector_candidates
from memories.embeddings import EmbeddingError, get_provider, query_vector_soon
from memories.fields import vector_text
from memories.search.params import BelowFloor, Candidate, SearchMode, min_score_value
from memory_platform import pagination
from memory_platform.db.replicas import lag_tolerant
from memory_platform.exceptions import SearchUnavailable, ValidationError
from organizations.principal import Principal
from organizations.selectors import repository_named

MAX_LIMIT = 100
DEFAULT_LIMIT = 10
MAX_QUERY_CHARS = 2000
GLOB_MAX_CHARS = 500


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
    # Results scoring below this are left out; None: the default floor, CODE_SEARCH_MIN_SCORE.
    min_score: float | None = None

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
            min_score=min_score_value(values.get("min_score")),
        )

    @property
    def floor(self) -> float:
        return float(settings.CODE_SEARCH_MIN_SCORE) if self.min_score is None else self.min_score


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
    # Set when the floor left out every candidate: how many scored below it, and the best score.
    below_floor: BelowFloor | None = None


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


# --- the search ------------------------------------------------------------------------------------------


def _trimmed(content: str) -> tuple[str, bool]:
    limit = settings.CODE_SEARCH_CONTENT_MAX_CHARS
    if len(content) <= limit:
        return content, False
    cut = content.rfind("\n", 0, limit)
    return content[: cut if cut > limit // 2 else limit], True


@dataclass
class Retrieved:
    """What the retrievers found for one search, and what its ranking measures features against."""

    vector_hits: list[Candidate]
    keyword_hits: list[Candidate]
    keyword_floor: float | None  # the legacy fusion's (memories.search.fusion), for the benchmark
    terms: CodeTerms | None
    vector: list[float] | None
    degraded: str | None  # why hybrid search ran on keywords alone, if it had to


def retrieve(principal: Principal, params: CodeSearchParams) -> Retrieved:
    """Both retrievers' candidates (or the one ``mode`` asks for). The query is embedded in a worker
    thread while the keyword retriever runs."""
    scope = _scope(principal, params)
    organization_id = principal.organization.pk
    pool = max(settings.SEARCH_CANDIDATES, 5 * params.limit)
    found = Retrieved([], [], None, None, None, None)
    embedding = query_vector_soon(params.query) if params.mode != SearchMode.KEYWORD else None
    corpus = statistics.corpus(organization_id)
    if params.mode != SearchMode.VECTOR:
        found.terms = CodeTerms.of(organization_id, params.query, corpus)
        found.keyword_hits, found.keyword_floor = keyword_candidates(scope, found.terms, pool)
    if embedding is not None:
        try:
            found.vector = embedding.result()
        except EmbeddingError as error:
            if params.mode == SearchMode.VECTOR:
                raise SearchUnavailable(
                    f"semantic search is unavailable right now ({error}); retry later or use keyword mode"
                ) from error
            found.degraded = f"embedding provider unavailable, keyword results only: {error}"
        else:
            narrowed = any((params.repository, params.language, params.path, params.chunk_type))
            found.vector_hits = vector_candidates(
                scope, organization_id, found.vector, pool, narrowed=narrowed, chunks=corpus.chunks
            )
    return found


def rank(found: Retrieved) -> list[Candidate]:
    """Every candidate, scored by the model of the retrievers that ran, best first."""
    if found.terms is None:
        return rank_vector(found.vector_hits)
    if found.vector is None:
        return rank_keyword(found.keyword_hits, found.terms)
    return rank_hybrid(
        found.vector_hits, found.keyword_hits, found.terms, vector_text(found.vector), get_provider().name
    )


def code_search(principal: Principal, params: CodeSearchParams) -> CodeSearchResult:
    """The best chunks for the query among those of the principal's organization, those scoring
    under the floor left out (when that leaves none, the result says how many it left out). Read
    from the replica when it may answer (memory_platform.db.replicas)."""
    return lag_tolerant(principal.organization.pk, lambda: _code_search(principal, params))


def _code_search(principal: Principal, params: CodeSearchParams) -> CodeSearchResult:
    found = retrieve(principal, params)
    ranked = rank(found)
    kept = [candidate for candidate in ranked if candidate.score >= params.floor]
    below_floor = None
    if ranked and not kept:
        below_floor = BelowFloor(count=len(ranked), best_score=round(max(c.score for c in ranked), 6))
    best = kept[: params.limit]
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
            hits.append(CodeHit(chunk, round(candidate.score, 4), content, truncated))
    return CodeSearchResult(hits=hits, degraded=found.degraded, below_floor=below_floor)
