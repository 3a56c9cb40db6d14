"""The keyword side of code search in a large organization, made to start at a few chunks: words
counted in one pass give the exact counts, the pre-rank per term picks the chunks the IDF-weighted
ts_rank of every term would, and BM25 scores them as the textbook formula does."""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.db import connection

from code_index import retrievers
from code_index.models import CodeChunk
from code_index.retrievers import CodeTerms, keyword_candidates
from memories.search.keyword import selecting_lexemes
from memories.search.term_counts import quote_lexeme
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

QUERY = "parse the amount in cents, retry the request and return the user"


def exact_counts(organization_id: int, lexemes: list[str]) -> dict[str, int]:
    with connection.cursor() as cursor:
        return {
            lexeme: cursor.execute(
                "SELECT count(*) FROM code_index_codechunk WHERE organization_id = %s "
                "AND search_vector @@ to_tsquery('simple', %s)",
                [organization_id, quote_lexeme(lexeme)],
            ).fetchone()[0]
            for lexeme in lexemes
        }


def test_common_words_counted_in_one_pass_are_counted_exactly(indexed: Tenant, settings: Any) -> None:
    settings.SEARCH_KEYWORD_SCAN_LIMIT = 3  # the organization is "large": common words by ts_stat
    organization_id = indexed.organization.pk
    chunks = CodeChunk.objects.filter(organization_id=organization_id).count()
    assert chunks > 3

    terms = CodeTerms.of(organization_id, QUERY)

    assert terms.total == chunks
    assert terms.frequencies == exact_counts(organization_id, terms.lexemes)
    common = retrievers.statistics._common[organization_id][1]
    assert {lx for lx in terms.lexemes if terms.frequencies[lx] > 0} & set(common)  # some came from the pass


def reference_pre_rank(organization_id: int, terms: CodeTerms, selecting: list[str]) -> list[tuple[int, float]]:
    """Every chunk matching a selecting term with the sum of each term's IDF times its ts_rank: the
    one expression over all matches that the per-term pre-rank replaces."""
    weight = dict(zip(terms.lexemes, terms.idf, strict=True))
    estimate = " + ".join(["0.0"] + ["%s * ts_rank(search_vector, to_tsquery('simple', %s))"] * len(selecting))
    params: list[Any] = [value for lx in selecting for value in (weight[lx], quote_lexeme(lx))]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, {estimate} FROM code_index_codechunk WHERE organization_id = %s "  # noqa: S608 - ours
            "AND search_vector @@ to_tsquery('simple', %s) ORDER BY 2 DESC, 1",
            [*params, organization_id, " | ".join(quote_lexeme(lx) for lx in selecting)],
        )
        return [(pk, float(value)) for pk, value in cursor.fetchall()]


def bm25(chunk_vector: dict[str, int], length: int, terms: CodeTerms) -> float:
    k1, b = retrievers.K1, retrievers.B
    total = 0.0
    for lexeme, weight in zip(terms.lexemes, terms.idf, strict=True):
        tf = chunk_vector.get(lexeme, 0)
        if tf:
            total += weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / terms.avg_length))
    return total


def test_the_pre_rank_per_term_keeps_the_best_by_every_terms_rank_and_bm25_scores_them(
    indexed: Tenant, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.SEARCH_KEYWORD_SCAN_LIMIT = 3
    organization_id = indexed.organization.pk
    terms = CodeTerms.of(organization_id, QUERY)
    selecting = selecting_lexemes(terms.lexemes, terms.frequencies, terms.total, terms.idf).lexemes
    reference = reference_pre_rank(organization_id, terms, selecting)
    kept = 4
    assert len(reference) > kept + 1  # the pre-rank has to leave some out
    assert reference[kept - 1][1] > reference[kept][1]  # and where it cuts is not a tie
    monkeypatch.setattr(retrievers, "PRE_RANK", kept)

    scope = CodeChunk.objects.filter(organization_id=organization_id)
    candidates, _ = keyword_candidates(scope, terms, 1)  # pre-ranks max(PRE_RANK, 3) = 4 chunks
    pre_ranked = {pk for pk, _ in reference[:kept]}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, length(search_vector), ARRAY(SELECT lexeme FROM unnest(search_vector)), "
            "ARRAY(SELECT cardinality(positions) FROM unnest(search_vector)) "
            "FROM code_index_codechunk WHERE id = ANY(%s)",
            [list(pre_ranked)],
        )
        scores = {
            pk: bm25(dict(zip(lexemes, counts, strict=True)), length, terms)
            for pk, length, lexemes, counts in cursor.fetchall()
        }
    best = max(scores, key=lambda pk: (scores[pk], -pk))

    assert [c.pk for c in candidates] == [best]
    assert candidates[0].keyword == pytest.approx(scores[best], rel=1e-9)
    assert math.isfinite(candidates[0].keyword) and candidates[0].keyword > 0
