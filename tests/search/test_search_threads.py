"""Where a search's work runs: the query is embedded in a worker thread while the keyword
retriever runs on the request's thread, and the vector retriever runs beside it on one of the
process's few readers (memory_platform.db.beside), or after it on the request's thread.

The readers are bounded (DATABASE_READERS_BESIDE) and the request never waits for a connection
of its own while holding one: an earlier design ran the vector retriever on a second pooled
connection per request thread, and 16 concurrent clients then held every pooled connection in
their request threads while their retrievers waited for one, so that every search failed at the
pool's timeout (bench/load.py: 3.4 requests/s, 84 errors in 219 requests).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import memories.embeddings
from memories.search import SearchParams, memory_search, pipeline
from tests.conftest import MemoryFactory, Tenant

FACTS = [
    "Deploys to production need a green pipeline and one approval.",
    "The payments service retries failed webhooks three times with backoff.",
    "Invoices are generated on the first day of each month.",
    "Database migrations must be backward compatible for one release.",
    "On-call engineers acknowledge pages within fifteen minutes.",
    "Feature flags are removed two weeks after full rollout.",
]


@pytest.mark.parametrize("readers", [2, 0])
@pytest.mark.django_db(transaction=True)
def test_the_keywords_are_read_on_the_requests_thread_the_vectors_beside_it_unless_turned_off(
    acme: Tenant, make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch, settings: Any, readers: int
) -> None:
    settings.DATABASE_READERS_BESIDE = readers
    for fact in FACTS:
        make_memory(current_content=fact)
    vectors: list[str] = []
    keywords: list[str] = []
    embedders: list[str] = []
    vector_candidates, keyword_candidates, embed = (
        pipeline.vector_candidates,
        pipeline.keyword_candidates,
        memories.embeddings.query_vector,
    )

    def spy(calls: list[str], original: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(threading.current_thread().name)
            return original(*args, **kwargs)

        return call

    monkeypatch.setattr(pipeline, "vector_candidates", spy(vectors, vector_candidates))
    monkeypatch.setattr(pipeline, "keyword_candidates", spy(keywords, keyword_candidates))
    monkeypatch.setattr(memories.embeddings, "query_vector", spy(embedders, embed))

    page = memory_search(acme.agent, SearchParams.build(query="how do we ship code to production", limit=4))

    here = threading.current_thread().name
    assert keywords == [here]
    assert len(vectors) == 1
    assert vectors[0].startswith("read-beside") if readers else vectors[0] == here
    assert len(embedders) == 1 and embedders[0].startswith("query-embedding")
    assert page.hits[0].memory.current_content == FACTS[0]
