"""When the embedding provider is down, hybrid search falls back to keywords and says so; vector
search refuses with a message that tells the caller what to do."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memories.embeddings import get_provider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import Memory
from memories.search import SearchUnavailable
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, page_through, search


@pytest.fixture
def memories(make_memory: MemoryFactory) -> list[Memory]:
    # Written while the real model is up, so they all have embeddings.
    return [
        make_memory(current_content="The staging cluster is rebooted every Sunday night.", importance=2),
        make_memory(current_content="Staging deploys need a green build.", importance=5),
        make_memory(current_content="The cafeteria serves vegetarian lunch on Wednesdays."),
    ]


@pytest.fixture
def provider_down(memories: list[Memory]) -> Iterator[None]:
    # A real HTTP provider pointed at a closed loopback port: connection refused, no mocks.
    reset_provider(
        OpenAICompatibleProvider(
            base_url="http://127.0.0.1:9", model="unreachable", api_key="", dimensions=384, timeout=2
        )
    )
    try:
        yield
    finally:
        reset_provider(None)


def test_hybrid_search_falls_back_to_keyword_results(acme: Tenant, memories: list[Memory], provider_down: None) -> None:
    page = search(acme.agent, query="staging cluster")

    assert hit_ids(page) == [memories[0].pk, memories[1].pk]
    assert page.degraded is not None
    assert "keyword results only" in page.degraded
    assert "127.0.0.1:9" in page.degraded
    assert all(hit.vector_similarity is None and hit.keyword_score is not None for hit in page.hits)


def test_degraded_hybrid_results_still_page(acme: Tenant, memories: list[Memory], provider_down: None) -> None:
    pages = page_through(acme.agent, query="staging cluster", limit=1)

    assert [pk for page in pages for pk in hit_ids(page)] == [memories[0].pk, memories[1].pk]
    assert all(page.degraded for page in pages)


def test_vector_search_is_refused_with_advice(acme: Tenant, memories: list[Memory], provider_down: None) -> None:
    with pytest.raises(SearchUnavailable) as caught:
        search(acme.agent, query="when do we restart the test servers?", mode="vector")

    message = caught.value.message
    assert message.startswith("semantic search is unavailable right now")
    assert "retry later or use keyword search" in message
    assert caught.value.code == "unavailable"


def test_keyword_search_and_browsing_do_not_need_the_provider(
    acme: Tenant, memories: list[Memory], provider_down: None
) -> None:
    keyword = search(acme.agent, query="staging", mode="keyword")
    browsed = search(acme.agent)

    assert set(hit_ids(keyword)) == {memories[0].pk, memories[1].pk}
    assert keyword.degraded is None
    assert len(browsed.hits) == 3 and browsed.degraded is None


def test_search_is_whole_again_once_the_provider_is_back(acme: Tenant, memories: list[Memory]) -> None:
    failing = OpenAICompatibleProvider(
        base_url="http://127.0.0.1:9", model="unreachable", api_key="", dimensions=384, timeout=2
    )
    reset_provider(failing)
    try:
        assert search(acme.agent, query="when do we restart the test servers?").degraded is not None
    finally:
        reset_provider(None)

    page = search(acme.agent, query="when do we restart the test servers?")

    assert page.degraded is None
    assert get_provider() is not failing
    assert hit_ids(page)[0] == memories[0].pk


@pytest.mark.django_db(transaction=True)  # outside a transaction, the vector retriever runs beside
def test_the_fallback_holds_when_the_vectors_were_read_beside(
    acme: Tenant, memories: list[Memory], provider_down: None
) -> None:
    page = search(acme.agent, query="staging cluster")

    assert hit_ids(page) == [memories[0].pk, memories[1].pk]
    assert page.degraded is not None and "keyword results only" in page.degraded
