"""Code search's two retrievers over a scope of chunks: by words (Okapi BM25 over the chunks'
keyword vectors, code_index.keywords) and by meaning (pgvector over their embeddings); and the
query's terms, weighed by the organization's statistics, which the ranking's features share."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.postgres.search import SearchQuery
from django.db import transaction
from django.db.models import ExpressionWrapper, FloatField, Max, QuerySet, Sum, Value
from django.db.models.expressions import RawSQL
from pgvector.django import CosineDistance

from code_index.keywords import keyword_text
from code_index.models import CodeChunk, CodeIndex
from memories.embeddings import get_provider
from memories.fields import vector_text
from memories.search.keyword import query_lexemes, selecting_lexemes
from memories.search.params import Candidate
from memories.search.term_counts import documents_holding, quote_lexeme, words_held_by_many
from memory_platform.db.replicas import read_connection, reading

# Okapi BM25 over the stored tsvector (as memories.search.keyword, with the textbook parameters:
# chunks vary in length far more than memories do). Parameters: average length, lexemes, IDFs.
# Only the chunk's lexemes that are query terms are unnested (setweight marks their positions A,
# every other D, and ts_filter keeps the A ones): a chunk holds ~60 lexemes, and joining all of
# them to the query's cost 58 us a chunk against 19 (300 chunks scored per keyword query at 52k).
K1, B = 1.2, 0.75
BM25_SQL = f"""
(SELECT coalesce(sum(
    w.idf[array_position(w.lexemes, t.lexeme)] * cardinality(t.positions) * {K1 + 1}
    / (cardinality(t.positions) + {K1} * ({1 - B} + {B} * length("code_index_codechunk"."search_vector") / %s))
  ), 0)
 FROM (SELECT %s::text[] AS lexemes, %s::float8[] AS idf) w,
   unnest(ts_filter(setweight(setweight("code_index_codechunk"."search_vector", 'D'), 'A', w.lexemes), '{{a}}')) t)
"""  # noqa: S608 - constants only
# Past this many matching chunks, ts_rank picks which ones BM25 scores.
PRE_RANK = 300


class Corpus(NamedTuple):
    chunks: int
    avg_length: float
    stamp: datetime | None


class _Statistics:
    """Per-organization chunk counts for BM25's IDF, kept until an index of the organization changes
    (its totals are refreshed at the end of every run, and ``stamp`` with them).

    In an organization past SEARCH_KEYWORD_SCAN_LIMIT chunks, the words at least ``common_share`` of
    its chunks hold are counted all at once (one ts_stat pass, 0.6-0.8 s at 52k chunks, once per
    index change): counting a common word when a query first asks for it read every chunk holding
    it, 17 ms at the median and 51 at p95 of a search at 52k. Rarer words are counted when asked
    for, through the full-text index, and cost little."""

    max_entries = 100_000
    common_share = 0.005

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._df: dict[tuple[int, datetime | None, str], int] = {}
        self._common: dict[int, tuple[datetime | None, dict[str, int]]] = {}

    def corpus(self, organization_id: int) -> Corpus:
        """The organization's chunks, their average length in lexemes, and when an index last changed."""
        totals = CodeIndex.objects.filter(organization_id=organization_id).aggregate(
            chunks=Sum("chunk_count"), lexemes=Sum("lexeme_total"), stamp=Max("updated_at")
        )
        chunks, lexemes = totals["chunks"] or 0, totals["lexemes"] or 0
        return Corpus(chunks, (lexemes / chunks if chunks else 1.0), totals["stamp"])

    def frequencies(
        self, organization_id: int, stamp: datetime | None, lexemes: list[str], chunks: int = 0
    ) -> dict[str, int]:
        """How many of the organization's ``chunks`` chunks (corpus() at ``stamp``) hold each lexeme."""
        with self._lock:
            found = {lx: self._df[key] for lx in lexemes if (key := (organization_id, stamp, lx)) in self._df}
        missing = [lx for lx in lexemes if lx not in found]
        if missing and chunks > settings.SEARCH_KEYWORD_SCAN_LIMIT:
            common = self._common_words(organization_id, stamp, chunks)
            found.update((lexeme, common[lexeme]) for lexeme in missing if lexeme in common)
            missing = [lexeme for lexeme in missing if lexeme not in common]
        if missing:
            rows = documents_holding("code_index_codechunk", organization_id, missing)
            with self._lock:
                if len(self._df) > self.max_entries:
                    self._df.clear()
                for lexeme, count in rows:
                    found[lexeme] = self._df[(organization_id, stamp, lexeme)] = int(count)
        return found

    def _common_words(self, organization_id: int, stamp: datetime | None, chunks: int) -> dict[str, int]:
        """How many of the organization's chunks hold each word that common_share of them hold."""
        with self._lock:
            cached = self._common.get(organization_id)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        common = words_held_by_many("code_index_codechunk", organization_id, max(int(chunks * self.common_share), 1))
        with self._lock:
            self._common[organization_id] = (stamp, common)
        return common


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
    def of(cls, organization_id: int, query: str, corpus: Corpus | None = None) -> CodeTerms:
        """The query's terms, weighed by the organization's ``corpus`` (statistics.corpus(), read now if None)."""
        lexemes, _ = query_lexemes(keyword_text(query) or query)
        if not lexemes:
            return cls([], [], {}, 1, 1.0)
        count, average, stamp = corpus or statistics.corpus(organization_id)
        frequencies = statistics.frequencies(organization_id, stamp, lexemes, count)
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


# The chunks matching many query terms, ranked by each term's IDF times its ts_rank in the chunk:
# one scan of each term's own matches (LATERAL, through the full-text index), summed per chunk. The
# same order as one expression of every term's ts_rank over the chunks matching any term, which
# ranked each chunk once per term, mostly for terms it does not hold: 67 against 23 ms for a query
# of eight terms matching 1,955 chunks of 52k.
_PRE_RANK_SQL = """
SELECT m.id FROM unnest(%s::text[], %s::float8[]) AS t(quoted, idf),
  LATERAL (SELECT s.id, t.idf * ts_rank(s.search_vector, to_tsquery('simple', t.quoted)) AS w
           FROM ({scope}) s WHERE s.search_vector @@ to_tsquery('simple', t.quoted)) m
GROUP BY m.id ORDER BY sum(m.w) DESC, m.id LIMIT %s
"""


def _pre_ranked(scope: QuerySet[CodeChunk], selecting: list[str], terms: CodeTerms, n: int) -> RawSQL:
    """The ids of the best ``n`` chunks of ``scope`` matching ``selecting`` (_PRE_RANK_SQL)."""
    weight = dict(zip(terms.lexemes, terms.idf, strict=True))
    scope_sql, scope_params = scope.values("id", "search_vector").query.sql_with_params()
    params = [[quote_lexeme(lx) for lx in selecting], [weight[lx] for lx in selecting], *scope_params, n]
    return RawSQL(_PRE_RANK_SQL.format(scope=scope_sql), params)  # noqa: S611 - our SQL and the scope's


def keyword_candidates(scope: QuerySet[CodeChunk], terms: CodeTerms, k: int) -> tuple[list[Candidate], float | None]:
    """BM25's best ``k`` chunks, and the score floor for scaling when common terms were left out."""
    lexemes, idf, frequencies = terms.lexemes, terms.idf, terms.frequencies
    if not lexemes:
        return [], None
    selection = selecting_lexemes(lexemes, frequencies, terms.total, idf)
    any_term = SearchQuery(" | ".join(quote_lexeme(lx) for lx in selection.lexemes), search_type="raw", config="simple")
    matching = scope.filter(search_vector=any_term)
    if sum(frequencies.get(lx, 0) for lx in selection.lexemes) > max(PRE_RANK, 3 * k):
        # The chunks by their ids, still within the scope: its organization ties the two reads.
        matching = scope.filter(pk__in=_pre_ranked(scope, selection.lexemes, terms, max(PRE_RANK, 3 * k)))
    rows = list(matching.annotate(bm25=terms.bm25()).order_by("-bm25", "pk").values_list("pk", "bm25")[:k])
    candidates = [
        Candidate(pk=pk, importance=1, created=0, keyword=score, keyword_rank=rank)
        for rank, (pk, score) in enumerate(rows, start=1)
    ]
    floor = selection.left_out_score if len(rows) < settings.SEARCH_CANDIDATES else None
    return candidates, floor


def _small(scope: QuerySet[CodeChunk], organization_id: int, *, narrowed: bool, chunks: int | None) -> bool:
    limit = settings.SEARCH_EXACT_SCAN_LIMIT
    chunks = statistics.corpus(organization_id).chunks if chunks is None else chunks
    if chunks <= limit or not narrowed:
        return chunks <= limit
    return bool(scope.values("pk").order_by()[: limit + 1].count() <= limit)


def vector_candidates(
    scope: QuerySet[CodeChunk],
    organization_id: int,
    vector: list[float],
    k: int,
    *,
    narrowed: bool = True,
    chunks: int | None = None,
) -> list[Candidate]:
    """The ``k`` nearest chunks: an exact scan of a small scope, else the HNSW graph scanned on
    (pgvector's iterative scan) until enough rows pass the organization and the filters. A scope
    not ``narrowed`` is the whole organization, of ``chunks`` chunks (read from the index totals
    when None)."""
    distance = CosineDistance("embedding", Value(vector_text(vector)))
    # Only vectors of the model that embedded the query compare with it.
    embedded = scope.filter(embedding__isnull=False, embedding_model=get_provider().name)
    small = _small(scope, organization_id, narrowed=narrowed, chunks=chunks)
    with transaction.atomic(reading()):  # the settings and the query on the connection searches read
        if small:
            ordering: Any = ExpressionWrapper(distance + Value(0.0), output_field=FloatField())
        else:
            with read_connection().cursor() as cursor:  # SET LOCAL both, in one round trip
                cursor.execute(
                    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                    "set_config('hnsw.ef_search', %s, true)",
                    [str(max(settings.SEARCH_HNSW_EF_SEARCH, k))],
                )
            ordering = distance
        rows = list(embedded.annotate(distance=distance).order_by(ordering).values_list("pk", "distance")[:k])
    rows.sort(key=lambda row: (row[1], row[0]))  # relaxed_order may return rows slightly out of order
    return [
        Candidate(pk=pk, importance=1, created=0, similarity=1.0 - distance, vector_rank=rank)
        for rank, (pk, distance) in enumerate(rows, start=1)
    ]
