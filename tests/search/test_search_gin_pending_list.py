"""The memories' GIN indexes keep no pending list: a write puts its entries in the index itself, so
no search has to scan entries that are waiting for a vacuum to merge them. The full-text index is
the organization's own (memories.search.tenant_indexes), built here for acme."""

from __future__ import annotations

import pytest
from django.db import connection

from memories.batch import memory_batch_create
from memories.search import tenant_indexes
from organizations.models import Organization
from tests.conftest import MemoryFactory, Tenant

TEXT_INDEX = "memory_text_o{}"
GIN_INDEXES = (TEXT_INDEX, "memory_tags_gin", "memory_metadata_gin")


@pytest.fixture(autouse=True)
def _acme_has_its_own_indexes(acme: Tenant) -> None:
    tenant_indexes.build(acme.organization.pk)


def _pending_pages(index: str) -> int:
    """Merges the index's pending list into it; returns how many pages the list held."""
    index = index.format(Organization.objects.get(slug="acme").pk)
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


def test_with_a_pending_list_the_check_sees_it(acme: Tenant, make_memory: MemoryFactory) -> None:
    # What the tests above would see if the index still had its pending list.
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER INDEX {TEXT_INDEX.format(acme.organization.pk)} SET (fastupdate = on)")
    make_memory()
    assert _pending_pages(TEXT_INDEX) == 1
