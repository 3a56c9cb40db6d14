"""Outside a transaction, the vector retriever runs in the embedding thread beside the keyword one.

Both candidate queries then run at once on two pooled connections; the results must be exactly
those of the one-after-the-other path taken inside a transaction.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import transaction

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
def test_parallel_and_sequential_retrieval_agree(
    acme: Tenant, make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for fact in FACTS:
        make_memory(current_content=fact)
    threads: list[str] = []
    original = pipeline.vector_candidates

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "vector_candidates", spy)
    params = SearchParams.build(query="how do we ship code to production", limit=4)

    parallel = memory_search(acme.agent, params)
    with transaction.atomic():
        sequential = memory_search(acme.agent, params)

    assert threads[0].startswith("query-embedding")
    assert threads[1] == threading.current_thread().name
    assert [(h.memory.pk, h.relevance) for h in parallel.hits] == [(h.memory.pk, h.relevance) for h in sequential.hits]
    assert parallel.hits[0].memory.current_content == FACTS[0]
    assert parallel.next_cursor == sequential.next_cursor
