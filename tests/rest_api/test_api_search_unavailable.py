"""With the embedding provider down, vector search is a 503 with Retry-After; hybrid degrades."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memories.embeddings import reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import Memory
from tests.conftest import MemoryFactory
from tests.rest_api.conftest import API, Api, error_of


@pytest.fixture
def memory(make_memory: MemoryFactory) -> Memory:
    return make_memory(current_content="The staging cluster is rebooted every Sunday night.")


@pytest.fixture
def provider_down(memory: Memory) -> Iterator[None]:
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


def test_vector_search_is_503_with_retry_after(api: Api, provider_down: None) -> None:
    response = api("reader").post(f"{API}/memories/search/", {"query": "staging cluster", "mode": "vector"})

    error = error_of(response, 503, "unavailable")
    assert response["Retry-After"] == "5"
    assert "use keyword search" in error["message"]


def test_hybrid_search_answers_with_keywords_and_a_warning(api: Api, memory: Memory, provider_down: None) -> None:
    response = api("reader").post(f"{API}/memories/search/", {"query": "staging cluster"})

    assert response.status_code == 200
    body = response.json()
    assert [hit["id"] for hit in body["results"]] == [str(memory.pk)]
    assert "keyword results only" in body["warning"]
