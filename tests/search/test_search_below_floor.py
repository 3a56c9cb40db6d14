"""An empty answer says why: when the floor leaves the first page of a search empty, the page says how
many scored candidates it left out and the best of their scores (``below_floor``), so that "nothing
here" and "something, but weak" differ. Otherwise (hits, ``min_score`` 0, nothing scored, a later
page, browsing) ``below_floor`` is None."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.batch import memory_batch_create
from memories.decisions import memory_delete
from memories.search import BelowFloor, SearchPage, scope_sizes, term_statistics
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

TEXTS = {
    "ruff": "Python code is linted with ruff before every commit.",
    "cents": "Payments store money as integer cents, never floats.",
    "friday": "Never deploy to production on Friday afternoons; wait for Monday.",
    "oncall": "On-call engineers hand over on Monday mornings at 10:00.",
}
# Only the ruff memory shares words with it ("python", "code"): keyword search finds that one alone.
QUERY = "which linter checks our python code?"


@pytest.fixture
def memories(make_memory: MemoryFactory) -> dict[str, Any]:
    return {key: make_memory(current_content=text, status="active").pk for key, text in TEXTS.items()}


def _best(page: SearchPage) -> float:
    return max(hit.score or 0.0 for hit in page.hits)


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_a_floor_above_every_score_says_how_many_it_left_out_and_the_best_score(
    acme: Tenant, memories: dict[str, Any], mode: str
) -> None:
    everything = search(acme.agent, query=QUERY, mode=mode, min_score=0, limit=50)
    best = _best(everything)
    high = (best + 1) / 2  # above every score

    page = search(acme.agent, query=QUERY, mode=mode, min_score=high, limit=50)

    assert page.hits == [] and page.next_cursor is None
    # What the same search scores at min_score 0: every candidate it found, and the best of their scores.
    assert page.below_floor == BelowFloor(count=len(everything.hits), best_score=best)
    assert page.below_floor.best_score < high
    if mode == "keyword":  # the one memory sharing the query's words, not the whole scope
        assert hit_ids(everything) == [memories["ruff"]]
        assert page.below_floor.count == 1


def test_the_default_floor_says_so_for_a_question_only_weak_matches_answer(
    acme: Tenant, memories: dict[str, Any]
) -> None:
    question = "what is the capital of France?"
    page = search(acme.agent, query=question, limit=50)
    everything = search(acme.agent, query=question, min_score=0, limit=50)

    assert page.hits == []
    assert page.below_floor == BelowFloor(count=len(TEXTS), best_score=_best(everything))


def test_a_page_with_hits_has_none_even_when_the_floor_left_some_out(acme: Tenant, memories: dict[str, Any]) -> None:
    everything = search(acme.agent, query=QUERY, min_score=0, limit=50)
    scores = sorted((hit.score or 0.0 for hit in everything.hits), reverse=True)
    between = (scores[0] + scores[1]) / 2

    page = search(acme.agent, query=QUERY, min_score=between, limit=50)

    assert hit_ids(page) == [memories["ruff"]]
    assert page.below_floor is None
    assert search(acme.agent, query=QUERY).below_floor is None  # the default floor finds it too


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_min_score_0_has_none(acme: Tenant, memories: dict[str, Any], mode: str) -> None:
    page = search(acme.agent, query="what is the capital of France?", mode=mode, min_score=0, limit=50)

    assert page.below_floor is None


def test_nothing_scored_has_none(acme: Tenant, memories: dict[str, Any]) -> None:
    # Keyword search scores word matches only: with no word in common there is nothing under the floor.
    for min_score in (None, 0.5):
        page = search(acme.agent, query="kubernetes helm charts", mode="keyword", min_score=min_score)
        assert page.hits == [] and page.below_floor is None


def test_a_later_page_has_none(acme: Tenant, memories: dict[str, Any]) -> None:
    everything = search(acme.agent, query=QUERY, mode="vector", min_score=0, limit=50)
    scores = [hit.score or 0.0 for hit in everything.hits]
    values: dict[str, Any] = {"query": QUERY, "mode": "vector", "min_score": (scores[1] + scores[2]) / 2, "limit": 1}
    first = search(acme.agent, **values)
    assert first.next_cursor is not None
    for hit in everything.hits[:2]:  # the two above the floor go before the next page is asked for
        memory_delete(principal=acme.curator, memory_id=hit.memory.pk, reason="test")

    later = search(acme.agent, cursor=first.next_cursor, **values)

    assert later.hits == [] and later.below_floor is None
    # Asked afresh, the same search says what is left under the floor.
    assert search(acme.agent, **values).below_floor == BelowFloor(count=len(TEXTS) - 2, best_score=scores[2])


def test_browsing_has_none(acme: Tenant, memories: dict[str, Any]) -> None:
    page = search(acme.agent, min_score=0.9, limit=50)

    assert len(page.hits) == len(TEXTS) and page.below_floor is None


@pytest.mark.parametrize("fusion", ["model", "score", "rrf"])
def test_hybrid_counts_what_the_model_scored_not_the_whole_scope(acme: Tenant, fusion: str, settings: Any) -> None:
    entries = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": f"Rollout step {n} is signed off."}
        for n in range(settings.SEARCH_RERANK_POOL + 10)
    ]
    assert all(result.ok for result in memory_batch_create(principal=acme.agent, entries=entries))
    values = {"query": "what is the capital of France?", "fusion": fusion, "limit": 100}
    everything = search(acme.agent, min_score=0, **values)

    page = search(acme.agent, min_score=1, **values)

    # Every memory was a candidate, but the model scored its pool only (a legacy fusion ranks the rest
    # with score 0: the model never saw them).
    assert len(everything.hits) == len(entries)
    assert page.below_floor == BelowFloor(count=settings.SEARCH_RERANK_POOL, best_score=_best(everything))


def test_it_costs_no_query_of_its_own(acme: Tenant, memories: dict[str, Any]) -> None:
    everything = search(acme.agent, query=QUERY, min_score=0, limit=50)
    scores = sorted((hit.score or 0.0 for hit in everything.hits), reverse=True)

    def queries(min_score: float) -> tuple[SearchPage, int]:
        term_statistics.clear()  # the same cache state for both measurements
        scope_sizes.clear()
        with CaptureQueriesContext(connection) as captured:
            page = search(acme.agent, query=QUERY, min_score=min_score, limit=50)
        return page, len(captured.captured_queries)

    one_hit, with_a_hit = queries((scores[0] + scores[1]) / 2)
    empty, below = queries((scores[0] + 1) / 2)

    assert len(one_hit.hits) == 1 and empty.below_floor is not None
    # The same retrievers and ranking; the empty page only loads no hits.
    assert below <= with_a_hit


def test_the_outsider_counts_only_its_own_memories(
    acme: Tenant, globex: Tenant, memories: dict[str, Any], make_memory: MemoryFactory
) -> None:
    make_memory(principal=globex.agent, current_content="Globex lints its Python code with flake8.", status="active")
    everything = search(globex.agent, query=QUERY, min_score=0, limit=50)

    page = search(globex.agent, query=QUERY, min_score=1, limit=50)

    assert len(everything.hits) == 1  # its own memory; none of acme's four
    assert page.below_floor == BelowFloor(count=1, best_score=_best(everything))
