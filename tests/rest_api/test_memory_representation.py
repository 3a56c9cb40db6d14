"""REST shows a memory through memory_representation, built without DRF's field machinery: it must
hold exactly what MemorySerializer (the schema) would, key for key, in the same order."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from memories.decisions import memory_delete
from memories.models import Memory
from memories.public import MEMORY_FIELDS
from rest_api.serializers import MemorySerializer, memory_representation
from tests.conftest import MemoryFactory, Tenant


def _varied(acme: Tenant, make_memory: MemoryFactory) -> list[Memory]:
    plain = make_memory()
    in_repository = make_memory(
        scope_type="repository",
        repository="payments-api",
        memory_type="convention",
        title="Money is integer cents",
        current_content="Amounts are integer cents, never floats.",
        tags=["money", "style"],
        metadata={"source_url": "https://example.com/adr/7", "reviewed": True, "pages": 3, "none": None},
        importance=9,
    )
    personal = make_memory(acme.person, scope_type="user", current_content="I review on Fridays.")
    dated = make_memory(current_content="The freeze runs over the holidays.")
    now = timezone.now()
    Memory.objects.filter(pk=dated.pk).update(
        valid_from=now - timedelta(days=3, microseconds=17), valid_until=now + timedelta(days=9)
    )
    superseded = make_memory(current_content="Deploys happen on Tuesdays.")
    Memory.objects.filter(pk=superseded.pk).update(superseded_by_id=plain.pk)
    deleted = make_memory(current_content="An obsolete note.")
    memory_delete(principal=acme.curator, memory_id=deleted.pk, reason="obsolete")
    pks = [memory.pk for memory in (plain, in_repository, personal, dated, superseded, deleted)]
    return list(Memory.objects.select_related("organization", "repository", "owner").filter(pk__in=pks))


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/St_Johns"])
def test_the_representation_is_the_serializers(acme: Tenant, make_memory: MemoryFactory, zone: str) -> None:
    memories = _varied(acme, make_memory)
    assert len(memories) == 6

    with timezone.override(zone):
        for memory in memories:
            expected: dict[str, Any] = dict(MemorySerializer(memory).data)
            shown = memory_representation(memory)

            assert list(shown) == list(expected)
            assert shown == expected, memory.pk
    assert list(expected)[: len(MEMORY_FIELDS)] == list(MEMORY_FIELDS)


def test_times_read_like_drf_writes_them(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()

    assert memory_representation(memory)["created_at"].endswith("Z")
    with timezone.override("Europe/Berlin"):
        assert memory_representation(memory)["created_at"][-6:] in ("+01:00", "+02:00")
