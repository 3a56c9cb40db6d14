from __future__ import annotations

from memories.services import memory_update
from tests.conftest import MemoryFactory, Tenant


def test_derived_title_follows_new_content(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="Deploys happen on Tuesdays. Ask ops first.")
    assert memory.title == "Deploys happen on Tuesdays"

    updated = memory_update(
        principal=acme.agent, memory_id=memory.id, data={"current_content": "Deploys happen on Thursdays."}
    )

    assert updated.title == "Deploys happen on Thursdays"
    assert sorted(updated.versions.first().changed_fields) == ["current_content", "title"]


def test_written_title_is_kept_when_content_changes(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(title="Deploy day", current_content="Deploys happen on Tuesdays.")

    updated = memory_update(
        principal=acme.agent, memory_id=memory.id, data={"current_content": "Deploys happen on Thursdays."}
    )

    assert updated.title == "Deploy day"
