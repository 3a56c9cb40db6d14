"""Code search's ranking: every candidate chunk's features, and its calibrated score in [0, 1].

The score means what a memory search's does (memories.search.model): the estimated probability that
the chunk is what the query looks for. Hybrid search scores the union of both retrievers' candidates
by ``code_index.model.HYBRID`` over absolute features, never scaled per query, so a query nothing
answers scores low and the floor (``min_score``) can leave its results out:

- ``similarity``: cosine similarity of the query's and the chunk's embeddings;
- ``keyword``: BM25 over the query's IDF mass (the share of the query's word weight the chunk holds);
- ``name``, ``container``, ``path``: the share of the query's word weight found among the words of
  the chunk's symbol name, of the class (or headings) it is in, and of its file's path, each split
  as code_index.keywords splits identifiers (``getUserName``: get, user, name);
- ``callable``: the chunk is a function or a method.

The features of the whole pool cost one query (plain SQL over the pool's ids, prepared: its plan
does not depend on them). Vector-only and keyword-only searches score by their own one-feature models,
which order exactly as similarity and BM25 do.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from django.conf import settings

from code_index.chunking import ChunkType
from code_index.model import models
from code_index.retrievers import BM25_SQL, CodeTerms
from memories.models import FULL_TEXT_CONFIG
from memories.search.model import Model
from memories.search.params import Candidate
from memory_platform.db.prepared import prepared_cursor
from memory_platform.db.replicas import reading


@dataclass(frozen=True)
class CodeFeatures:
    """What the ranking model knows of one chunk for one query; all absolute."""

    similarity: float = 0.0
    keyword: float = 0.0
    name: float = 0.0
    container: float = 0.0
    path: float = 0.0
    callable: float = 0.0


FEATURES = tuple(field.name for field in fields(CodeFeatures))
# The features that weigh words (CODE_SEARCH_KEYWORD_WEIGHT re-weighs them); similarity weighs meaning.
WORD_FEATURES = frozenset({"keyword", "name", "container", "path"})


def _words(column: str) -> str:
    """SQL for the words of an identifier-like column: camelCase, snake_case and path separators split."""
    upper = rf"regexp_replace({column}, '([A-Z]+)([A-Z][a-z])', '\1 \2', 'g')"
    camel = rf"regexp_replace({upper}, '([a-z0-9])([A-Z])', '\1 \2', 'g')"
    return f"regexp_replace({camel}, '[^A-Za-z0-9]+', ' ', 'g')"


def _coverage(column: str) -> str:
    """SQL for the IDF weight of the query's lexemes among a column's words (the query's ``q``)."""
    return (
        "(SELECT coalesce(sum(q.idf[array_position(q.lexemes, t.lexeme)]), 0)"  # noqa: S608 - constants only
        f" FROM unnest(to_tsvector('{FULL_TEXT_CONFIG}', {_words(column)})) AS t WHERE t.lexeme = ANY(q.lexemes))"
    )


_CHUNK = '"code_index_codechunk"'
# One row per pooled chunk: id, similarity (NULL for another model's vector or none), BM25, the
# name's, container's and path's coverage, the chunk type. BM25_SQL takes its own three parameters.
_FEATURES_SQL = (
    "WITH q AS (SELECT %s::vector AS v, %s::text AS model, %s::text[] AS lexemes, %s::float8[] AS idf)"  # noqa: S608 - our SQL, values as parameters
    f" SELECT {_CHUNK}.id, CASE WHEN {_CHUNK}.embedding_model = q.model THEN 1 - ({_CHUNK}.embedding <=> q.v) END,"
    f" {BM25_SQL}, {_coverage(f'{_CHUNK}.name')}, {_coverage(f'{_CHUNK}.container')},"
    f" {_coverage(f'{_CHUNK}.path')}, {_CHUNK}.chunk_type"
    f" FROM q CROSS JOIN {_CHUNK} WHERE {_CHUNK}.id = ANY(%s::bigint[])"
)

_CALLABLE = (ChunkType.FUNCTION, ChunkType.METHOD)


def candidate_features(
    pool: list[Any], terms: CodeTerms, vector: str | None, model_name: str
) -> dict[Any, CodeFeatures]:
    """The features of every chunk of ``pool`` (ids) for the query of ``terms`` and ``vector``
    (pgvector's text of it; None: similarity 0)."""
    if not pool:
        return {}
    mass = terms.mass or 1.0
    params = [vector, model_name, terms.lexemes, terms.idf, terms.avg_length, terms.lexemes, terms.idf, pool]
    with prepared_cursor(reading()) as cursor:
        cursor.execute(_FEATURES_SQL, params)
        rows = cursor.fetchall()
    return {
        pk: CodeFeatures(
            similarity=float(cosine or 0.0),
            keyword=float(bm25 or 0.0) / mass,
            name=float(name) / mass,
            container=float(container) / mass,
            path=float(path) / mass,
            callable=1.0 if chunk_type in _CALLABLE else 0.0,
        )
        for pk, cosine, bm25, name, container, path, chunk_type in rows
    }


def rank_value(model: Model, features: CodeFeatures) -> float:
    """The ranker's sum; the operator's CODE_SEARCH_*_WEIGHT re-weigh meaning and words (1: as fitted)."""
    total = model.bias
    for name, weight in model.weights.items():
        factor = 1.0
        if name == "similarity":
            factor = settings.CODE_SEARCH_VECTOR_WEIGHT
        elif name in WORD_FEATURES:
            factor = settings.CODE_SEARCH_KEYWORD_WEIGHT
        total += weight * factor * getattr(features, name)
    return total


def _scored(candidates: list[Candidate], features: dict[Any, CodeFeatures], model: Model) -> list[Candidate]:
    for candidate in candidates:
        candidate.score = candidate.relevance = model.score(rank_value(model, features[candidate.pk]))
    return sorted(candidates, key=lambda c: (-c.score, c.pk))


def rank_hybrid(
    vector_hits: list[Candidate], keyword_hits: list[Candidate], terms: CodeTerms, vector: str, model_name: str
) -> list[Candidate]:
    """Both retrievers' candidates, each once, by the hybrid model's score, best first."""
    pool = {c.pk: c for c in vector_hits} | {c.pk: c for c in keyword_hits}
    features = candidate_features(list(pool), terms, vector, model_name)
    return _scored([c for pk, c in pool.items() if pk in features], features, models.hybrid)


def rank_vector(vector_hits: list[Candidate]) -> list[Candidate]:
    features = {c.pk: CodeFeatures(similarity=c.similarity or 0.0) for c in vector_hits}
    return _scored(vector_hits, features, models.vector)


def rank_keyword(keyword_hits: list[Candidate], terms: CodeTerms) -> list[Candidate]:
    mass = terms.mass or 1.0
    features = {c.pk: CodeFeatures(keyword=(c.keyword or 0.0) / mass) for c in keyword_hits}
    return _scored(keyword_hits, features, models.keyword)
