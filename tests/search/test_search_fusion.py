"""Hybrid ranking (the model, and the legacy fusions), weights, boosts and the 002 sort contract.

Most searches here pass min_score 0: they are about order, not about what the floor leaves out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.batch import memory_batch_create
from memories.models import Memory
from memories.search.fusion import review_prior
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

QUERY = "how do we rotate the database credentials?"
BOTH = "We rotate the database credentials before every external audit."
MEANING_ONLY = "Postgres passwords and API secrets are replaced automatically every ninety days."
KEYWORD_ONLY = "Rotate the log files weekly to free disk space."
UNRELATED = [
    "The cafeteria serves vegetarian lunch on Wednesdays.",
    "Our frontend uses React with TypeScript.",
    "Invoices are sent to customers on the first business day of each month.",
    "The office closes at noon on public holidays.",
    "Database backups are kept for thirty days.",
    "Two approvals are needed before merging a pull request.",
]


@pytest.fixture
def corpus(make_memory: MemoryFactory) -> dict[str, Memory]:
    memories = {text: make_memory(current_content=text, importance=5) for text in UNRELATED}
    # The three contenders have the lowest importance: only relevance can lift them.
    for text in (BOTH, MEANING_ONLY, KEYWORD_ONLY):
        memories[text] = make_memory(current_content=text)
    return memories


def test_a_memory_matching_by_meaning_and_keywords_ranks_above_single_matches(
    acme: Tenant, corpus: dict[str, Memory]
) -> None:
    page = search(acme.agent, query=QUERY, min_score=0)
    hits = {hit.memory.current_content: hit for hit in page.hits}

    assert page.hits[0].memory == corpus[BOTH]
    # The other two really are single matches.
    assert hits[MEANING_ONLY].keyword_score is None
    assert hits[KEYWORD_ONLY].keyword_score is not None
    assert hits[MEANING_ONLY].vector_similarity > hits[KEYWORD_ONLY].vector_similarity + 0.1  # type: ignore[operator]
    ids = hit_ids(page)
    assert ids.index(corpus[BOTH].pk) < ids.index(corpus[MEANING_ONLY].pk)
    assert ids.index(corpus[BOTH].pk) < ids.index(corpus[KEYWORD_ONLY].pk)
    # Each single match still beats the memories that match neither way (no word, little meaning).
    unrelated = [ids.index(corpus[text].pk) for text in UNRELATED if hits[text].keyword_score is None]
    assert unrelated and ids.index(corpus[MEANING_ONLY].pk) < min(unrelated)


def test_rrf_fusion_also_puts_the_double_match_first(acme: Tenant, corpus: dict[str, Memory]) -> None:
    page = search(acme.agent, query=QUERY, fusion="rrf", min_score=0)

    assert page.hits[0].memory == corpus[BOTH]
    # Weighted reciprocal ranks: 1.0 / (60 + 1) + 1.5 / (60 + 1) at best, times a draft's review prior.
    best = 2.5 / 61 * review_prior("draft")
    assert page.hits[0].relevance == pytest.approx(best, abs=1e-6)
    assert all(0 <= hit.relevance <= best + 1e-6 for hit in page.hits)  # type: ignore[operator]
    # The model still says how sure it is: the double match scores highest.
    assert page.hits[0].score == max(hit.score for hit in page.hits)  # type: ignore[type-var]


def test_without_keyword_weight_hybrid_orders_like_vector_search(acme: Tenant, corpus: dict[str, Memory]) -> None:
    vector = search(acme.agent, query=QUERY, mode="vector", limit=50, min_score=0)
    hybrid = search(acme.agent, query=QUERY, keyword_weight=0, limit=50, min_score=0)

    assert hit_ids(hybrid) == hit_ids(vector)


def test_without_vector_weight_hybrid_orders_keyword_matches_like_keyword_search(
    acme: Tenant, corpus: dict[str, Memory]
) -> None:
    keyword = search(acme.agent, query=QUERY, mode="keyword", limit=50, min_score=0)
    hybrid = search(acme.agent, query=QUERY, vector_weight=0, limit=50, min_score=0)

    assert len(keyword.hits) >= 3
    matched = [hit.memory.pk for hit in hybrid.hits if hit.keyword_score is not None]
    assert matched == hit_ids(keyword)
    # Every word match comes before the misses, which follow by importance.
    assert hit_ids(hybrid)[: len(matched)] == matched


def test_weights_change_the_order(acme: Tenant, corpus: dict[str, Memory]) -> None:
    by_meaning = hit_ids(search(acme.agent, query=QUERY, keyword_weight=0, min_score=0))
    by_words = hit_ids(search(acme.agent, query=QUERY, vector_weight=0, min_score=0))

    meaning, words = corpus[MEANING_ONLY].pk, corpus[KEYWORD_ONLY].pk
    assert by_meaning.index(meaning) < by_meaning.index(words)
    assert by_words.index(words) < by_words.index(meaning)


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_scores_are_reported_for_the_retrievers_that_ran(acme: Tenant, corpus: dict[str, Memory], mode: str) -> None:
    page = search(acme.agent, query=QUERY, mode=mode, limit=50, min_score=0)

    assert page.hits and page.mode == mode
    relevances = [hit.relevance for hit in page.hits]
    assert all(relevance is not None and 0 <= relevance <= 1 for relevance in relevances)
    assert relevances == sorted(relevances, reverse=True)  # type: ignore[type-var]
    similarities = [hit.vector_similarity for hit in page.hits]
    keyword_scores = [hit.keyword_score for hit in page.hits]
    if mode == "keyword":
        assert similarities == [None] * len(page.hits)
    else:
        assert all(s is not None and -1 <= s <= 1 for s in similarities)
    if mode == "vector":
        assert keyword_scores == [None] * len(page.hits)
    else:
        assert all(score > 0 for score in keyword_scores if score is not None)
        assert any(score is not None for score in keyword_scores)


def test_browsing_without_a_query_reports_no_scores(acme: Tenant, corpus: dict[str, Memory]) -> None:
    page = search(acme.agent, limit=50)

    assert len(page.hits) == len(corpus)
    assert {(hit.relevance, hit.vector_similarity, hit.keyword_score) for hit in page.hits} == {(None, None, None)}


def _twins(make_memory: MemoryFactory, text: str, importances: list[int]) -> list[Memory]:
    """Memories with the same text (so the same relevance), created one after another."""
    return [make_memory(current_content=text, importance=importance) for importance in importances]


@pytest.mark.parametrize(("mode", "fusion"), [("hybrid", None), ("hybrid", "rrf"), ("vector", None), ("keyword", None)])
def test_equal_relevance_is_ordered_by_importance_then_newest(
    acme: Tenant, make_memory: MemoryFactory, mode: str, fusion: str | None
) -> None:
    make_memory(current_content="The cafeteria serves vegetarian lunch on Wednesdays.", importance=10)
    low, older_high, mid, newer_high = _twins(
        make_memory, "Deploys are frozen during the last week of December.", [2, 7, 4, 7]
    )

    page = search(acme.agent, query="deploy freeze in December", mode=mode, fusion=fusion, min_score=0)

    assert hit_ids(page)[:4] == [newer_high.pk, older_high.pk, mid.pk, low.pk]


def test_without_a_query_the_order_is_importance_then_newest(acme: Tenant, make_memory: MemoryFactory) -> None:
    first = make_memory(importance=3)
    second = make_memory(importance=9)
    third = make_memory(importance=3)
    fourth = make_memory(importance=1)

    page = search(acme.agent)

    assert hit_ids(page) == [second.pk, third.pk, first.pk, fourth.pk]


def test_importance_boost_lifts_an_important_memory_that_is_slightly_less_relevant(
    acme: Tenant, corpus: dict[str, Memory], make_memory: MemoryFactory
) -> None:
    closer = make_memory(current_content="Deploys are frozen during the last week of December.", importance=1)
    important = make_memory(current_content="Deployments freeze for the final December week.", importance=10)
    query = "Deploys are frozen during the last week of December."

    plain = hit_ids(search(acme.agent, query=query, mode="vector", min_score=0))
    boosted = hit_ids(search(acme.agent, query=query, mode="vector", importance_boost=5, min_score=0))

    assert plain[:2] == [closer.pk, important.pk]
    assert boosted[:2] == [important.pk, closer.pk]


def test_recency_boost_lifts_a_recent_memory_that_is_slightly_less_relevant(
    acme: Tenant, corpus: dict[str, Memory], make_memory: MemoryFactory
) -> None:
    closer = make_memory(current_content="Deploys are frozen during the last week of December.")
    recent = make_memory(current_content="Deployments freeze for the final December week.")
    Memory.objects.filter(pk=closer.pk).update(created_at=timezone.now() - timedelta(days=365))
    query = "Deploys are frozen during the last week of December."

    plain = hit_ids(search(acme.agent, query=query, mode="vector", min_score=0))
    boosted = hit_ids(search(acme.agent, query=query, mode="vector", recency_boost=5, min_score=0))

    assert plain[:2] == [closer.pk, recent.pk]
    # Everything else is new too, so the year-old memory may fall further than second place.
    assert boosted[0] == recent.pk


def test_a_boost_lifts_relevance_but_never_the_score(acme: Tenant) -> None:
    entries = [
        {
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": f"Deploy note {n}: service {n} ships on day {n % 7}.",
            "importance": 1 + n % 10,
        }
        for n in range(110)
    ]
    memory_batch_create(principal=acme.agent, entries=entries)
    query = "when does service 3 ship?"

    plain = {hit.memory.pk: hit for hit in search(acme.agent, query=query, mode="vector", limit=200, min_score=0).hits}
    boosted = {
        hit.memory.pk: hit
        for hit in search(acme.agent, query=query, mode="vector", limit=200, importance_boost=2, min_score=0).hits
    }

    assert len(plain) == len(boosted) == 110
    for pk, hit in plain.items():
        assert boosted[pk].score == hit.score  # what the memory is worth to the query does not change
        if hit.memory.importance > 1:
            assert boosted[pk].relevance > hit.relevance, hit.memory.current_content  # type: ignore[operator]
        else:
            assert boosted[pk].relevance == hit.relevance
