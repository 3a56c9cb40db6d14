from __future__ import annotations

import pytest
from django.utils import timezone

from memories.decisions import memory_invalidate, memory_lock
from memories.models import Memory
from memories.selectors import memory_list
from memory_platform.exceptions import Locked, NotFound, ValidationError
from tests.conftest import MemoryFactory, Tenant


def test_invalidate_deprecates_ends_validity_and_names_successor(acme: Tenant, make_memory: MemoryFactory) -> None:
    old = make_memory(current_content="Deploys go out on Tuesdays.")
    new = make_memory(current_content="Deploys go out on Thursdays.")

    before = timezone.now()
    memory_invalidate(principal=acme.agent, memory_id=old.id, reason="moved to Thursdays", superseded_by=new.id)

    stored = Memory.objects.get(pk=old.pk)
    assert stored.status == "deprecated"
    assert stored.valid_until is not None and stored.valid_until >= before
    assert stored.superseded_by_id == new.id
    version = stored.versions.first()
    assert version.change == "invalidate" and version.reason == "moved to Thursdays"
    assert old.id not in {m.id for m in memory_list(acme.agent)}


def test_invalidate_needs_a_reason(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    with pytest.raises(ValidationError, match="reason"):
        memory_invalidate(principal=acme.agent, memory_id=memory.id, reason="  ")


def test_invalidate_refuses_locked_for_agents(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_lock(principal=acme.curator, memory_id=memory.id)
    with pytest.raises(Locked):
        memory_invalidate(principal=acme.agent, memory_id=memory.id, reason="outdated")
    memory_invalidate(principal=acme.curator, memory_id=memory.id, reason="outdated")


def test_successor_must_be_visible(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    foreign = make_memory(principal=globex.agent)
    with pytest.raises(NotFound):
        memory_invalidate(principal=acme.agent, memory_id=memory.id, reason="x", superseded_by=foreign.id)
    with pytest.raises(NotFound):
        memory_invalidate(principal=globex.agent, memory_id=memory.id, reason="x")
