"""The legacy fusions of hybrid search (``fusion`` "score" or "rrf"; the default ranks by the model,
memories.search.ranking): a weighted sum of the two retrievers' scores, each min-max scaled per
query, or weighted reciprocal-rank fusion; and the optional boosts by importance and recency."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from memories.models import Status
from memories.search.cursors import Scales
from memories.search.params import Candidate, Fusion, SearchParams

RRF_K = 60


@dataclass(frozen=True)
class MinMax:
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
    def over(cls, ranked_scores: list[float | None], *, clamp: bool, floor: float | None = None) -> MinMax:
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


def _merge(vector_hits: list[Candidate], keyword_hits: list[Candidate]) -> dict[Any, Candidate]:
    merged: dict[Any, Candidate] = {candidate.pk: candidate for candidate in vector_hits}
    for candidate in keyword_hits:
        existing = merged.get(candidate.pk)
        if existing is None:
            merged[candidate.pk] = candidate
        else:
            existing.keyword, existing.keyword_rank = candidate.keyword, candidate.keyword_rank
    return merged


def review_prior(status: str) -> float:
    """What a memory's standing multiplies its relevance by: curated (locked, then verified) before
    unreviewed among memories that answer a query comparably, and an active memory (its writer
    stands behind it) before a draft (its writer was unsure, or the write policy holds it for a
    curator: a rule, a pin, text addressed to other agents). The score itself is left as it is: it
    says how likely the memory answers, not who stands behind it (bench/review_prior.py measured both).

    ``held`` (memories.search.caches.standing) is an unreviewed memory whose text reads as orders to
    the agents reading it: what could steer them past the curators ranks far behind the rest."""
    if status == "held":
        return float(settings.SEARCH_REVIEW_PRIOR_HELD)
    if status == Status.LOCKED:
        return 1.0
    if status == Status.VERIFIED:
        return float(settings.SEARCH_REVIEW_PRIOR_VERIFIED)
    if status == Status.ACTIVE:
        return float(settings.SEARCH_REVIEW_PRIOR_ACTIVE)
    return float(settings.SEARCH_REVIEW_PRIOR_DRAFT)


def boost(candidate: Candidate, params: SearchParams, now: datetime | None = None) -> float:
    """The factor a relevance is multiplied by: the review prior, and the importance and recency boosts
    a caller asked for."""
    factor = review_prior(candidate.status)
    if params.importance_boost:
        factor *= 1 + params.importance_boost * (candidate.importance - 1) / 9
    if params.recency_boost:
        now = now or timezone.now()
        age_days = max((now - candidate.created_at).total_seconds() / 86400, 0.0)
        factor *= 1 + params.recency_boost * math.exp(-age_days / 30)
    return factor


def fuse(
    vector_hits: list[Candidate],
    keyword_hits: list[Candidate],
    params: SearchParams,
    *,
    scales: Scales | None,
    clamp: bool,
    keyword_floor: float | None = None,
) -> tuple[list[Candidate], Scales]:
    """Rank the merged candidates; also return the score scales used, for the next page's cursor."""
    vector_weight = settings.SEARCH_VECTOR_WEIGHT if params.vector_weight is None else params.vector_weight
    keyword_weight = settings.SEARCH_KEYWORD_WEIGHT if params.keyword_weight is None else params.keyword_weight
    merged = _merge(vector_hits, keyword_hits)
    fusion = params.fusion or Fusion(settings.SEARCH_FUSION)
    if scales is None:
        vector_scale = MinMax.over([c.similarity for c in vector_hits], clamp=clamp)
        keyword_scale = MinMax.over([c.keyword for c in keyword_hits], clamp=clamp, floor=keyword_floor)
    else:
        vector_scale = MinMax(low=scales[0], spread=scales[1], clamp=clamp)
        keyword_scale = MinMax(low=scales[2], spread=scales[3], clamp=clamp)
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
        factor = boost(candidate, params, now)
        # A boost lifts: a score below 0 (weaker than the best candidates) is divided by it.
        candidate.relevance = score * factor if score >= 0 else score / factor
    used = (vector_scale.low, vector_scale.spread, keyword_scale.low, keyword_scale.spread)
    return sorted(merged.values(), key=Candidate.sort_key), used
