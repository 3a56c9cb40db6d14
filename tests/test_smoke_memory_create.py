from __future__ import annotations

from memories.models import Memory, MemoryVersion
from memories.services import memory_create
from tests.conftest import Tenant


def test_create_writes_memory_version_and_derived_title(acme: Tenant) -> None:
    memory, _ = memory_create(
        principal=acme.agent,
        data={
            "scope_type": "organization",
            "memory_type": "business_rule",
            "current_content": "All deployments must pass acceptance tests. Otherwise they are rolled back.",
            "importance": 10,
        },
    )
    stored = Memory.objects.get(pk=memory.pk)
    assert stored.title == "All deployments must pass acceptance tests"
    assert stored.status == "draft"
    assert stored.version == 1
    assert MemoryVersion.objects.filter(memory=stored, version=1, change="create").count() == 1
    assert stored.search_vector is not None
