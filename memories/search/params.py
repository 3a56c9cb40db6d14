"""What a search is asked (SearchParams, validated from raw interface input) and what it answers
(SearchPage of SearchHits); and the Candidate that the retrievers hand to fusion."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from memories.models import Memory
from memories.selectors import MemoryFilters
from memory_platform import pagination
from memory_platform.exceptions import ValidationError

MAX_RESULTS = 1000
MAX_QUERY_CHARS = 2000


class SearchMode(enum.StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    KEYWORD = "keyword"


class Fusion(enum.StrEnum):
    # The ranking model (memories.search.model): the calibrated score itself, from absolute features
    # (cosine similarity, keyword coverage, names, time, the memory's neighbours in its session).
    # On LoCoMo (leave-one-conversation-out) it beats both below; see the README.
    MODEL = "model"
    # Weighted sum of each retriever's scores, min-max scaled per query. On LoCoMo it beats
    # reciprocal-rank fusion clearly (R@10 0.694 against 0.646 at their best weights), because
    # it keeps how far ahead a candidate is, not just its place.
    SCORE = "score"
    RRF = "rrf"  # weighted reciprocal-rank fusion


def _choice(value: Any, choices: type[enum.StrEnum], name: str, label: str) -> None:
    if value not in choices.__members__.values():
        raise ValidationError(
            f"unknown {label} '{value}'; use one of: {', '.join(c.value for c in choices)}", details={"field": name}
        )


def min_score_value(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValidationError(
            "min_score must be a number from 0 to 1 (0 keeps every match; leave it out for the default floor)",
            details={"field": "min_score"},
        )
    return float(value)


def _weights(values: dict[str, Any]) -> dict[str, float]:
    numbers = {}
    for name in ("vector_weight", "keyword_weight", "importance_boost", "recency_boost"):
        value = values.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
            raise ValidationError(f"{name} must be a number from 0 to 100", details={"field": name})
        numbers[name] = float(value)
    return numbers


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
    # Results scoring below this are left out; None: the default floor (SEARCH_MIN_SCORE) when there is a query.
    min_score: float | None = None

    @classmethod
    def build(cls, **values: Any) -> SearchParams:
        """Validate raw interface input; every bad value gets a message naming it."""
        query = values.get("query") or ""
        if not isinstance(query, str):
            raise ValidationError("query must be text", details={"field": "query"})
        if len(query) > MAX_QUERY_CHARS:
            raise ValidationError(f"query is longer than {MAX_QUERY_CHARS} characters", details={"field": "query"})
        mode = values.get("mode") or SearchMode.HYBRID
        _choice(mode, SearchMode, "mode", "mode")
        limit = values.get("limit", 20)
        if limit is not None:
            pagination.check_limit(limit, MAX_RESULTS)
        numbers = _weights(values)
        fusion = values.get("fusion")
        if fusion is not None:
            _choice(fusion, Fusion, "fusion", "fusion")
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
            min_score=min_score_value(values.get("min_score")),
            **numbers,
        )

    def fingerprint(self) -> str:
        payload = asdict(self)
        payload.pop("cursor")
        return pagination.fingerprint(payload)


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    # The order of the results (the score, times any importance or recency boost asked for).
    relevance: float | None = None
    vector_similarity: float | None = None
    keyword_score: float | None = None
    # The calibrated score: the estimated probability that the memory is relevant (memories.search.model).
    score: float | None = None


@dataclass(frozen=True)
class BelowFloor:
    """What the floor left out of an empty first page: how many scored candidates, and the best score.

    Without it an agent cannot tell "nothing here" from "something, but weak": the right answer to a
    question worded unlike the memory can score just under the floor.
    """

    count: int
    best_score: float  # rounded as a hit's score is


@dataclass(frozen=True)
class SearchPage:
    hits: list[SearchHit]
    next_cursor: str | None
    mode: SearchMode
    # Set when hybrid search ran on keywords alone because the embedding provider was down.
    degraded: str | None = None
    # Set only on an empty first page of a search with a query, when the floor left candidates out.
    below_floor: BelowFloor | None = None


# (-relevance, -importance, -created_at in whole microseconds, id): ascending is result order.
SortKey = tuple[float, int, int, str]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(moment: datetime) -> int:
    # Whole microseconds survive JSON exactly; a float timestamp may not.
    return (moment - EPOCH) // timedelta(microseconds=1)


def from_micros(value: int) -> datetime:
    """The moment ``micros`` gave ``value`` for (in UTC)."""
    return EPOCH + timedelta(microseconds=value)


@dataclass
class Features:
    """What the ranking model knows of one memory for one query (memories.search.model weighs them).

    All are absolute, so a score means the same in an organization of ten memories or of a million.
    """

    similarity: float = 0.0  # cosine similarity of the embeddings
    keyword: float = 0.0  # BM25 over the query's IDF mass: the share of the query's words it matches
    # The best of the memory and the two written around it in its session (without a session: its own).
    context_similarity: float = 0.0
    context_keyword: float = 0.0
    states_time: float = 0.0  # 1 when the query asks "when" and the memory says when
    in_span: float = 0.0  # 1 when the query names a date and the memory is from that day, month or year


@dataclass
class Candidate:
    """One memory a retriever found (or the unscored tail added), with what fusion needs to rank it."""

    pk: Any
    importance: int
    # created_at in whole microseconds (micros): every sort compares it, and the retrievers read it so.
    created: int
    similarity: float | None = None
    keyword: float | None = None
    vector_rank: int | None = None
    keyword_rank: int | None = None
    relevance: float = 0.0
    score: float = 0.0
    # The ranking model's inputs (memories.search.features), when hybrid search computed them.
    features: Features | None = None
    # Written in a conversation session (source.session): its neighbours there join the features.
    in_session: bool = False
    # Its status: how far curators stand behind it orders it among comparable answers (fusion.boost).
    status: str = ""

    @property
    def created_at(self) -> datetime:
        return from_micros(self.created)

    def sort_key(self) -> SortKey:
        # The pk itself, not its text: a UUID orders as its text does (fixed-width lowercase hex),
        # and hundreds of candidates a search each turned theirs into text several times.
        return (-self.relevance, -self.importance, -self.created, self.pk)
