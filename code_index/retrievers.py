"""Code search's two retrievers over a scope of chunks: by words (Okapi BM25 over the chunks'
keyword vectors, code_index.keywords) and by meaning (pgvector over their embeddings); and the
query's terms, weighed by the organization's statistics, which the ranking's features share."""

from __future__ import annotations

import math
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

from code_index.keywords import keyword_text
from code_index.models import CodeChunk, CodeIndex
from memories.embeddings import get_provider
from memories.fields import vector_text
from memories.search.caches import documents_holding, quote_lexeme
from memories.search.keyword import query_lexemes, selecting_lexemes
from memories.search.params import Candidate

# Okapi BM25 over the stored tsvector (as memories.search.keyword, with the textbook parameters:
# chunks vary in length far more than memories do). Parameters: average length, lexemes, IDFs.
K1, B = 1.2, 0.75
BM25_SQL = f"""
(SELECT coalesce(sum(
    q.idf * cardinality(t.positions) * {K1 + 1}
    / (cardinality(t.positions) + {K1} * ({1 - B} + {B} * length("code_index_codechunk"."search_vector") / %s))
  ), 0)
 FROM unnest("code_index_codechunk"."search_vector") AS t
 JOIN unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) ON q.lexeme = t.lexeme)
"""  # noqa: S608 - constants only
# Past this many matching chunks, ts_rank picks which ones BM25 scores.
PRE_RANK = 300


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


@dataclass(frozen=True)
class CodeTerms:
    """The query's words as the organization's chunks see them: lexemes (of its identifiers, split as
    a chunk's are), their IDFs, how many chunks hold each, and the chunks' count and average length."""

    lexemes: list[str]
    idf: list[float]
    frequencies: dict[str, int]
    total: int
    avg_length: float

    @classmethod
    def of(cls, organization_id: int, query: str) -> CodeTerms:
        lexemes, _ = query_lexemes(keyword_text(query) or query)
        if not lexemes:
            return cls([], [], {}, 1, 1.0)
        count, average, stamp = statistics.corpus(organization_id)
        frequencies = statistics.frequencies(organization_id, stamp, lexemes)
        total = max(count, max(frequencies.values(), default=0), 1)
        idf = [math.log(1 + (total - frequencies.get(lx, 0) + 0.5) / (frequencies.get(lx, 0) + 0.5)) for lx in lexemes]
        return cls(lexemes, idf, frequencies, total, max(average, 1.0))

    @property
    def mass(self) -> float:
        """What BM25 gives a chunk holding every query word once, at average length: the sum of the IDFs."""
        return sum(self.idf)

    def bm25(self) -> RawSQL:
        """BM25 of each chunk of a queryset, as an annotation."""
        return RawSQL(BM25_SQL, [self.avg_length, self.lexemes, self.idf], output_field=FloatField())  # noqa: S611


def keyword_candidates(scope: QuerySet[CodeChunk], terms: CodeTerms, k: int) -> tuple[list[Candidate], float | None]:
    """BM25's best ``k`` chunks, and the score floor for scaling when common terms were left out."""
    lexemes, idf, frequencies = terms.lexemes, terms.idf, terms.frequencies
    if not lexemes:
        return [], None
    selection = selecting_lexemes(lexemes, frequencies, terms.total, idf)
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
    rows = list(matching.annotate(bm25=terms.bm25()).order_by("-bm25", "pk").values_list("pk", "bm25")[:k])
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
