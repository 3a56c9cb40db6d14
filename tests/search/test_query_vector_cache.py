"""Recent search queries are embedded once per process (memories.embeddings.query_vector)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from memories.embeddings import EmbeddingError, query_vector, reset_provider
from memories.search import SearchParams, memory_search
from tests.conftest import MemoryFactory, Tenant
from tests.embedder import HashEmbedder


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.down = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.down:
            raise EmbeddingError("the model is down")
        self.texts += texts
        return super().embed(texts)


@pytest.fixture
def embedder() -> CountingEmbedder:
    provider = CountingEmbedder()
    reset_provider(provider)
    return provider


@pytest.mark.django_db
def test_a_repeated_search_embeds_its_query_once(
    acme: Tenant, make_memory: MemoryFactory, embedder: CountingEmbedder
) -> None:
    make_memory(current_content="Deploys need a second reviewer.")
    embedder.texts.clear()
    params = SearchParams.build(query="who reviews deploys?", limit=5)

    first = memory_search(acme.agent, params)
    second = memory_search(acme.agent, params)

    assert embedder.texts == ["who reviews deploys?"]
    assert [(h.memory.pk, h.score) for h in first.hits] == [(h.memory.pk, h.score) for h in second.hits]
    assert first.hits


def test_the_cached_vector_is_the_providers_float_for_float(embedder: CountingEmbedder) -> None:
    embedded = query_vector("exact floats")
    cached = query_vector("exact floats")

    assert cached == embedded == embedder.embed(["exact floats"])[0]
    assert embedder.texts.count("exact floats") == 2  # the first call and the check above, not the cached one


def test_float32_vectors_are_kept_as_float32(settings: Any) -> None:
    import array

    class Float32Embedder(HashEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [array.array("f", vector).tolist() for vector in super().embed(texts)]

    reset_provider(Float32Embedder())
    embedded = query_vector("float32 model")

    assert query_vector("float32 model") == embedded


def test_the_oldest_query_leaves_first(settings: Any, embedder: CountingEmbedder) -> None:
    settings.EMBEDDING_QUERY_CACHE_SIZE = 2
    for text in ("one", "two", "one", "three", "one", "two"):
        query_vector(text)

    # "one" stays (used again before "three" came); "two" was the oldest when "three" arrived.
    assert embedder.texts == ["one", "two", "three", "two"]


def test_size_zero_turns_it_off(settings: Any, embedder: CountingEmbedder) -> None:
    settings.EMBEDDING_QUERY_CACHE_SIZE = 0
    query_vector("again")
    query_vector("again")

    assert embedder.texts == ["again", "again"]


def test_a_failure_is_not_remembered(embedder: CountingEmbedder) -> None:
    embedder.down = True
    with pytest.raises(EmbeddingError):
        query_vector("while down")
    embedder.down = False

    assert query_vector("while down") == HashEmbedder().embed(["while down"])[0]
    assert embedder.texts == ["while down"]


def test_a_new_provider_starts_empty(embedder: CountingEmbedder) -> None:
    query_vector("model change")
    other = CountingEmbedder()
    reset_provider(other)

    query_vector("model change")

    assert other.texts == ["model change"]
