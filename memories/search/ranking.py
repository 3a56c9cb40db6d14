"""Ranking: every candidate's calibrated score (memories.search.model), and the order of the results.

Hybrid search ranks by the hybrid model's score (or, when the caller asks for ``fusion`` "score" or
"rrf", by that fusion of the two retrievers, still reporting the model's score); vector and keyword
search rank by their own one-feature models, which order exactly as similarity and BM25 do.
Importance and recency boosts multiply the score into the relevance the results are ordered by.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.conf import settings
from django.db.models import QuerySet

from memories.models import Memory
from memories.search.caches import ScopeSQL
from memories.search.cursors import Scales
from memories.search.features import QueryContext, candidate_features
from memories.search.fusion import boost, fuse
from memories.search.keyword import QueryTerms
from memories.search.model import Model, models
from memories.search.params import Candidate, Features, Fusion, SearchMode, SearchParams

NO_SCALES: Scales = (0.0, 0.0, 0.0, 0.0)


@dataclass
class Retrieved:
    """What the retrievers found for one query, and what the features are measured against."""

    vector_hits: list[Candidate]
    keyword_hits: list[Candidate]
    keyword_floor: float | None
    terms: QueryTerms | None
    context: QueryContext | None  # hybrid search with an embedded query: the full model runs
    mode: SearchMode  # the mode that ran: keyword when hybrid had to do without the embedding


def _weight_factors(params: SearchParams) -> tuple[float, float]:
    """A caller's own weights of meaning and words, relative to the defaults the model was fitted at."""
    vector = 1.0 if params.vector_weight is None else params.vector_weight / max(settings.SEARCH_VECTOR_WEIGHT, 1e-9)
    keyword = (
        1.0 if params.keyword_weight is None else params.keyword_weight / max(settings.SEARCH_KEYWORD_WEIGHT, 1e-9)
    )
    return vector, keyword


def _score(
    candidates: list[Candidate],
    model: Model,
    params: SearchParams,
    terms: QueryTerms | None,
    *,
    statements: Model | None = None,
) -> None:
    """Each candidate's score by ``model``; by ``statements`` instead, when given, for a memory
    written outside a conversation session (memories.search.model: one calibrated scale for both)."""
    vector_factor, keyword_factor = _weight_factors(params)
    names_unknown = terms.names_unknown if terms else 0.0
    for candidate in candidates:
        features = candidate.features or Features()
        by = model if statements is None or candidate.in_session else statements
        value = by.rank_value(features, vector_factor=vector_factor, keyword_factor=keyword_factor)
        candidate.score = by.score(value, names_unknown=names_unknown)
        candidate.relevance = candidate.score * boost(candidate, params)


def _single(found: Retrieved, params: SearchParams) -> list[Candidate]:
    if found.mode == SearchMode.VECTOR:
        candidates = found.vector_hits
        for candidate in candidates:
            candidate.features = Features(similarity=candidate.similarity or 0.0)
        _score(candidates, models.vector, params, None)
    else:
        candidates = found.keyword_hits
        mass = found.terms.mass if found.terms and found.terms.mass else 1.0
        for candidate in candidates:
            candidate.features = Features(keyword=(candidate.keyword or 0.0) / mass)
        _score(candidates, models.keyword, params, found.terms)
    return candidates


def pool_size() -> int:
    """How many of the first pass's best candidates the model scores: the same whatever the page size,
    so pages join up to one big request and a memory scores the same whatever the limit."""
    return int(settings.SEARCH_RERANK_POOL)


def rank(
    found: Retrieved, params: SearchParams, scope: QuerySet[Memory] | ScopeSQL, *, scales: Scales | None
) -> tuple[list[Candidate], Scales]:
    """The candidates in result order, with their scores; and the scales the first pass used.

    Hybrid: a first pass (the weighted sum of scaled scores, which needs nothing more from the
    database) picks the pool the model scores; the model's features cost a query, so it scores the
    best few dozen, and brings in the session neighbours of the best half of them. A cursor carries
    the first pass's scales, so a write between pages does not change which memories the pool holds.
    """
    if found.context is None:
        return sorted(_single(found, params), key=Candidate.sort_key), NO_SCALES
    fusion = params.fusion or Fusion(settings.SEARCH_FUSION)
    first, used = fuse(
        found.vector_hits,
        found.keyword_hits,
        params if fusion != Fusion.MODEL else replace(params, fusion=Fusion.SCORE),
        scales=scales,
        clamp=True,
        keyword_floor=found.keyword_floor,
    )
    size = pool_size()
    pool = [c.pk for c in first[:size]]
    # The model reads the session context of the best half: those of them written in a session.
    in_sessions = [c.pk for c in first[: size // 2] if c.in_session] if fusion == Fusion.MODEL else []
    scored = candidate_features(scope, pool, found.context, neighbors_of=in_sessions)
    statements = models.statement if settings.SEARCH_STATEMENT_MODEL else None
    _score(scored, models.hybrid, params, found.terms, statements=statements)
    if fusion == Fusion.MODEL:
        return sorted(scored, key=Candidate.sort_key), used
    # A legacy fusion orders; the model still says how sure it is (0 past the pool).
    by_pk = {c.pk: c for c in scored}
    for candidate in first:
        model = by_pk.get(candidate.pk)
        candidate.score, candidate.features = (model.score, model.features) if model else (0.0, None)
    return first, used
