"""The memories' GIN indexes keep no pending list: a write puts its entries in the index itself, so
no search has to scan entries that are waiting for a vacuum to merge them."""

from __future__ import annotations

import pytest
from django.db import connection

from memories.batch import memory_batch_create
from tests.conftest import MemoryFactory, Tenant

GIN_INDEXES = ("memory_search_vector_gin", "memory_tags_gin", "memory_metadata_gin")


def _pending_pages(index: str) -> int:
    """Merges the index's pending list into it; returns how many pages the list held."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT gin_clean_pending_list(%s::regclass)", [index])
        return int(cursor.fetchone()[0])


@pytest.mark.parametrize("index", GIN_INDEXES)
def test_a_written_memory_leaves_nothing_pending(index: str, make_memory: MemoryFactory) -> None:
    make_memory(tags=["release", "ops"], metadata={"ticket": "OPS-1"})
    assert _pending_pages(index) == 0


def test_a_batch_leaves_nothing_pending(acme: Tenant) -> None:
    items = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": f"Batch fact {n}", "tags": ["b"]}
        for n in range(20)
    ]
    memory_batch_create(principal=acme.agent, entries=items)
    assert [_pending_pages(index) for index in GIN_INDEXES] == [0, 0, 0]


def test_with_a_pending_list_the_check_sees_it(make_memory: MemoryFactory) -> None:
    # What the tests above would see if the index still had its pending list.
    with connection.cursor() as cursor:
        cursor.execute("ALTER INDEX memory_search_vector_gin SET (fastupdate = on)")
    make_memory()
    assert _pending_pages("memory_search_vector_gin") == 1
