"""A search holds one database connection: the query is embedded in a worker thread while the
keyword retriever runs, and the vector retriever then runs on the request's own thread.

With the vector retriever on a second pooled connection, 16 concurrent clients held every pooled
connection in their request threads while their retrievers waited for one: every search then
failed at the pool's timeout (bench/load.py: 3.4 requests/s, 84 errors in 219 requests).
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


@pytest.mark.django_db(transaction=True)
def test_both_retrievers_run_on_the_requests_thread_and_the_query_is_embedded_beside_them(
    acme: Tenant, make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for fact in FACTS:
        make_memory(current_content=fact)
    retrievers: list[str] = []
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

    monkeypatch.setattr(pipeline, "vector_candidates", spy(retrievers, vector_candidates))
    monkeypatch.setattr(pipeline, "keyword_candidates", spy(retrievers, keyword_candidates))
    monkeypatch.setattr(memories.embeddings, "query_vector", spy(embedders, embed))

    page = memory_search(acme.agent, SearchParams.build(query="how do we ship code to production", limit=4))

    assert retrievers == [threading.current_thread().name] * 2
    assert len(embedders) == 1 and embedders[0].startswith("query-embedding")
    assert page.hits[0].memory.current_content == FACTS[0]
