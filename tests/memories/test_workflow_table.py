"""One workflow table: the services refuse what it does not allow, and the admin offers what it does
(docs/reference/workflow.md prints it: tests/docs)."""

from __future__ import annotations

import pytest

from memories import workflow
from memories.admin_decisions import DECISIONS, decisions_for
from memories.decisions import memory_lock, memory_set_status, memory_verify
from memories.models import Memory
from memories.services import memory_update
from memory_platform.exceptions import Conflict, ValidationError
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def test_verifying_a_locked_memory_is_refused_and_it_stays_locked(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_lock(principal=acme.curator, memory_id=memory.pk, reason="agreed")

    for attempt in (
        lambda: memory_verify(principal=acme.curator, memory_id=memory.pk, reason="again"),
        lambda: memory_set_status(principal=acme.curator, memory_id=memory.pk, status="verified"),
        lambda: memory_update(principal=acme.curator, memory_id=memory.pk, data={"status": "verified"}),
    ):
        with pytest.raises(Conflict, match="is locked: 'verify' applies to active, draft memories; a locked one"):
            attempt()

    stored = Memory.objects.get(pk=memory.pk)
    assert (stored.status, stored.version) == ("locked", 2)


def test_the_admin_offers_exactly_what_the_table_allows(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_lock(principal=acme.curator, memory_id=memory.pk, reason="agreed")
    memory.refresh_from_db()

    offered = {decision.name for decision in decisions_for(memory)}

    assert offered == {d.name for d in workflow.decisions_for(memory)} == {"unlock", "deprecate", "delete"}
    assert set(DECISIONS) == set(workflow.DECISIONS)


def test_a_reason_is_held_to_the_same_rules_everywhere(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()

    with pytest.raises(ValidationError, match="keep it to 2000"):
        memory_update(principal=acme.agent, memory_id=memory.pk, data={"importance": 2}, reason="x" * 2001)
    assert Memory.objects.get(pk=memory.pk).version == 1
