"""Metadata is at most five flat, short key/value pairs (the index policy agents are given)."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Memory
from memories.selectors import MemoryFilters
from memories.services import memory_create, memory_update
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant

BASE = {"scope_type": "organization", "memory_type": "fact", "current_content": "Invoices are sent on the 1st."}


def test_five_flat_pairs_of_every_scalar_kind_are_kept(acme: Tenant) -> None:
    metadata = {"ticket": "PAY-12", "attempts": 3, "ratio": 0.5, "urgent": True, "owner": None}
    memory, _ = memory_create(principal=acme.agent, data={**BASE, "metadata": metadata})
    assert Memory.objects.get(pk=memory.pk).metadata == metadata


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({f"k{i}": i for i in range(6)}, "has 6 keys; keep at most 5"),
        ({"owner": {"team": "billing"}}, "'owner' holds a dict; values must be flat"),
        ({"steps": ["a", "b"]}, "'steps' holds a list"),
        ({"notes": "x" * 201}, "'notes' is longer than 200 characters"),
        ({"": "empty key"}, "must be 1 to 64 characters"),
        ({"k" * 65: "long key"}, "must be 1 to 64 characters"),
    ],
)
def test_metadata_outside_the_policy_is_refused_with_what_to_change(
    acme: Tenant, metadata: dict[str, Any], says: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        memory_create(principal=acme.agent, data={**BASE, "metadata": metadata})
    assert says in raised.value.message
    assert raised.value.details == {"field": "metadata"}
    assert not Memory.objects.exists()


def test_an_update_is_held_to_the_same_rules(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(metadata={"team": "billing"})
    with pytest.raises(ValidationError, match="holds a dict"):
        memory_update(principal=acme.agent, memory_id=memory.pk, data={"metadata": {"team": {"name": "billing"}}})
    memory.refresh_from_db()
    assert memory.metadata == {"team": "billing"}


def test_a_filter_with_a_nested_value_is_refused() -> None:
    with pytest.raises(ValidationError, match="values must be flat"):
        MemoryFilters.from_mapping({"metadata": {"team": {"name": "billing"}}})
