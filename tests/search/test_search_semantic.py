"""Search by meaning: a question that shares no word with a memory still finds it."""

from __future__ import annotations

import pytest

from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

# (memory, a question about it that shares no word stem with it)
PAIRS = [
    ("The staging cluster is rebooted every Sunday night.", "when do we restart the test servers?"),
    ("Invoices are emailed to customers on the first business day of each month.", "when are clients billed?"),
    ("Postgres passwords are changed automatically every quarter.", "how often are database credentials rotated?"),
    ("Recruits get a laptop and a security badge on their first day.", "what equipment do new employees receive?"),
    (
        "The mobile app crashes on Android 12 when the camera permission is denied.",
        "phone application fails if photo access is refused",
    ),
]
UNRELATED = [
    "The cafeteria serves vegetarian lunch on Wednesdays.",
    "Our frontend uses React with TypeScript.",
    "The office closes at noon on public holidays.",
    "Code reviews need two approvals before merging.",
    "Logs are kept for thirty days in Elasticsearch.",
]


@pytest.fixture
def memories(make_memory: MemoryFactory) -> dict[str, Memory]:
    # Unrelated memories are given higher importance, so only relevance can put the answer first.
    for text in UNRELATED:
        make_memory(current_content=text, importance=9)
    return {question: make_memory(current_content=text) for text, question in PAIRS}


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_question_sharing_no_words_finds_the_memory_first(
    acme: Tenant, memories: dict[str, Memory], mode: str
) -> None:
    for question, memory in memories.items():
        # By default (above the floor): the memory comes first.
        assert hit_ids(search(acme.agent, query=question, mode=mode))[0] == memory.pk, question
        page = search(acme.agent, query=question, mode=mode, min_score=0)

        assert hit_ids(page)[0] == memory.pk, (question, [hit.memory.current_content for hit in page.hits[:3]])
        first, second = page.hits[0], page.hits[1]
        assert first.relevance is not None and second.relevance is not None
        assert first.relevance > second.relevance
        assert first.vector_similarity is not None and second.vector_similarity is not None
        assert first.vector_similarity > second.vector_similarity + 0.1, question


def test_keyword_mode_does_not_find_a_memory_that_shares_no_words(acme: Tenant, memories: dict[str, Memory]) -> None:
    for question, memory in memories.items():
        page = search(acme.agent, query=question, mode="keyword")

        assert memory.pk not in hit_ids(page), question


def test_semantic_search_ranks_every_visible_memory(acme: Tenant, memories: dict[str, Memory]) -> None:
    # With min_score 0 vector search ranks the whole scope, best first; by default what is too far
    # from the question in meaning stays out.
    query = "when do we restart the test servers?"
    page = search(acme.agent, query=query, mode="vector", limit=100, min_score=0)
    default = search(acme.agent, query=query, mode="vector", limit=100)

    assert len(page.hits) == len(PAIRS) + len(UNRELATED)
    similarities = [hit.vector_similarity for hit in page.hits]
    assert similarities == sorted(similarities, reverse=True)  # type: ignore[type-var]
    assert hit_ids(default) == [memories[query].pk]
