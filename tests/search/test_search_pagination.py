"""Paging with next_cursor gives exactly the sequence of one big request: no duplicates, no gaps.

These searches pass min_score 0, which keeps every candidate and, in hybrid mode, the memories no
retriever found after them: paging must reach the whole scope then (the floor's own tests are in
test_search_score_floor.py)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from memories.batch import memory_batch_create
from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, page_through, search

TOPICS = [
    "canary deploys",
    "database failover",
    "on-call handover",
    "feature flags",
    "log retention",
    "incident reviews",
    "load testing",
    "secret rotation",
    "cache invalidation",
    "schema migrations",
]


def _rollout_memories(tenant: Tenant, count: int) -> list[Memory]:
    """``count`` memories that all mention the rollout, with varied topics and repeated importances."""
    entries = [
        {
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": f"Rollout note {n}: {TOPICS[n % len(TOPICS)]} "
            + "rollout " * (n % 3)
            + f"for service {n // len(TOPICS)}.",
            "importance": 1 + n % 4,
        }
        for n in range(count)
    ]
    results = memory_batch_create(principal=tenant.agent, entries=entries)
    return [result.memory for result in results if result.memory is not None]


def _unrelated_memories(tenant: Tenant) -> None:
    memory_batch_create(
        principal=tenant.agent,
        entries=[
            {"scope_type": "organization", "memory_type": "fact", "current_content": text, "importance": 3}
            for text in (
                "The cafeteria serves vegetarian lunch on Wednesdays.",
                "Our frontend uses React with TypeScript.",
                "The office closes at noon on public holidays.",
            )
        ],
    )


def _sequence(pages: list[Any]) -> list[uuid.UUID]:
    return [pk for page in pages for pk in hit_ids(page)]


SEARCHES: list[dict[str, Any]] = [
    {"query": "rollout of canary deploys", "mode": "hybrid", "min_score": 0},
    {"query": "rollout of canary deploys", "mode": "hybrid", "fusion": "rrf", "min_score": 0},
    {"query": "rollout of canary deploys", "mode": "keyword", "min_score": 0},
    {"query": "rollout of canary deploys", "mode": "vector", "min_score": 0},
    {"query": ""},
]


@pytest.mark.parametrize("values", SEARCHES, ids=["hybrid", "rrf", "keyword", "vector", "browse"])
def test_pages_join_up_to_one_big_request(acme: Tenant, values: dict[str, Any]) -> None:
    _rollout_memories(acme, 30)
    # Unrelated memories: not keyword matches, but part of a vector or browse result.
    _unrelated_memories(acme)

    whole = search(acme.agent, limit=1000, **values)
    pages = page_through(acme.agent, limit=4, **values)

    assert whole.next_cursor is None
    assert len(whole.hits) >= 30
    assert _sequence(pages) == hit_ids(whole)
    assert all(len(page.hits) == 4 for page in pages[:-1])
    assert 1 <= len(pages[-1].hits) <= 4 and pages[-1].next_cursor is None


def test_paging_goes_past_the_candidate_pool(acme: Tenant) -> None:
    # More matches than one retriever fetches for a small page (settings.SEARCH_CANDIDATES = 100).
    memories = {memory.pk for memory in _rollout_memories(acme, 130)}

    for mode in ("keyword", "vector", "hybrid"):
        whole = search(acme.agent, query="rollout", mode=mode, limit=1000, min_score=0)
        pages = page_through(acme.agent, query="rollout", mode=mode, limit=10, min_score=0)

        assert set(hit_ids(whole)) == memories, mode
        assert _sequence(pages) == hit_ids(whole), mode


def test_an_exact_page_boundary_ends_with_no_cursor(acme: Tenant) -> None:
    _rollout_memories(acme, 8)

    pages = page_through(acme.agent, query="rollout", mode="keyword", limit=4, min_score=0)

    assert [len(page.hits) for page in pages] == [4, 4]
    assert pages[-1].next_cursor is None


def test_a_single_page_has_no_cursor(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory(current_content="The rollout starts on Monday.")

    page = search(acme.agent, query="rollout", limit=20)

    assert len(page.hits) == 1 and page.next_cursor is None


@pytest.mark.parametrize(
    ("values", "importance"),
    [
        ({"query": "rollout of canary deploys", "mode": "hybrid", "min_score": 0}, 4),
        ({"query": "rollout of canary deploys", "mode": "keyword", "min_score": 0}, 4),
        ({"query": "rollout of canary deploys", "mode": "vector", "min_score": 0}, 4),
        ({"query": ""}, 1),  # lands after the cursor
        ({"query": ""}, 10),  # lands before it
    ],
    ids=["hybrid", "keyword", "vector", "browse-unimportant", "browse-important"],
)
def test_a_memory_written_between_pages_causes_no_duplicates_or_gaps(
    acme: Tenant, make_memory: MemoryFactory, values: dict[str, Any], importance: int
) -> None:
    before = _rollout_memories(acme, 20)
    first = search(acme.agent, limit=5, **values)
    assert first.next_cursor is not None

    # A better match than anything so far: it moves the top of every score scale.
    newcomer = make_memory(
        current_content="Rollout of canary deploys: rollout canary deploys rollout.", importance=importance
    )
    rest = [first]
    while rest[-1].next_cursor is not None:
        rest.append(search(acme.agent, limit=5, cursor=rest[-1].next_cursor, **values))

    sequence = _sequence(rest)
    assert len(sequence) == len(set(sequence)), "a memory came back twice"
    original = [pk for pk in sequence if pk != newcomer.pk]
    assert sorted(original) == sorted(memory.pk for memory in before)
