"""A keyword score is Okapi BM25 (k1 0.9, b 0.4) of the query's words in the memory, title and
content alike: checked against BM25 computed here from the memories' own tsvectors."""

from __future__ import annotations

import math
import re

import pytest
from django.db import connection

from memories.search import SearchParams
from memories.search.pipeline import memory_search_candidates
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import search

MEMORIES = [
    ("Canary deploys", "Canary deploys go to one region first; a canary that fails rolls back the deploy."),
    ("Rollbacks", "A rollback restores the previous release within five minutes."),
    ("Deploy freeze", "No deploys on Fridays after noon, canary or not."),
    ("Regions", "Every region has its own on-call engineer and its own deploy window."),
    ("Release notes", "Release notes are written before the release, not after."),
]
QUERY = "canary deploy rollback region freeze"


def _vectors(tenant: Tenant) -> list[dict[str, int]]:
    """Each memory's lexemes with their number of positions, read from its stored tsvector."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT search_vector::text FROM memories_memory WHERE organization_id = %s AND deleted_at IS NULL",
            [tenant.organization.pk],
        )
        texts = [row[0] for row in cursor.fetchall()]
    return [
        {lexeme: len(positions.split(",")) for lexeme, positions in re.findall(r"'([^']+)':(\S+)", text)}
        for text in texts
    ]


def _query_lexemes(query: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme FROM unnest(to_tsvector('english', %s))", [query])
        return [row[0] for row in cursor.fetchall()]


def _bm25(tenant: Tenant, query: str) -> dict[str, float]:
    """BM25 of every memory of the organization, by its content."""
    vectors = _vectors(tenant)
    lexemes = _query_lexemes(query)
    average = sum(len(vector) for vector in vectors) / len(vectors)
    frequency = {lexeme: sum(lexeme in vector for vector in vectors) for lexeme in lexemes}
    idf = {lx: math.log(1 + (len(vectors) - frequency[lx] + 0.5) / (frequency[lx] + 0.5)) for lx in lexemes}
    scores = []
    for vector in vectors:
        norm = 0.9 * (0.6 + 0.4 * len(vector) / average)
        scores.append(sum(idf[lx] * vector[lx] * 1.9 / (vector[lx] + norm) for lx in lexemes if lx in vector))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_content FROM memories_memory WHERE organization_id = %s AND deleted_at IS NULL",
            [tenant.organization.pk],
        )
        contents = [row[0] for row in cursor.fetchall()]
    return dict(zip(contents, scores, strict=True))


@pytest.fixture
def memories(make_memory: MemoryFactory) -> None:
    for title, content in MEMORIES:
        make_memory(title=title, current_content=content)


@pytest.mark.usefixtures("memories")
def test_keyword_search_scores_are_bm25(acme: Tenant) -> None:
    expected = _bm25(acme, QUERY)

    page = search(acme.agent, query=QUERY, mode="keyword", min_score=0)

    scored = {hit.memory.current_content: hit.keyword_score for hit in page.hits}
    assert scored == pytest.approx({content: score for content, score in expected.items() if score > 0}, abs=1e-6)
    assert len(scored) == 4  # all but "Release notes", some with a word twice or in title and content


@pytest.mark.usefixtures("memories")
def test_the_ranking_model_reads_the_same_bm25(acme: Tenant) -> None:
    expected = _bm25(acme, QUERY)

    candidates, retrieved = memory_search_candidates(acme.agent, SearchParams.build(query=QUERY, limit=10))

    assert retrieved.terms is not None
    mass = retrieved.terms.mass
    contents = {memory.pk: memory.current_content for memory in acme.organization.memories.all()}
    features = {contents[c.pk]: c.features.keyword * mass for c in candidates if c.features is not None}
    assert features == pytest.approx({content: expected[content] for content in features}, abs=1e-9)
    assert max(features.values()) > 0
