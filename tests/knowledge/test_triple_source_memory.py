from __future__ import annotations

import pytest

from knowledge.services import triple_assert
from memory_platform.exceptions import NotFound
from tests.conftest import MemoryFactory, Tenant


def test_a_fact_remembers_the_memory_it_came_from(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="Alice moved to the Search team.")

    fact, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Search", memory_id=memory.pk
    )

    assert fact.memory_id == memory.pk
    assert list(memory.triples.all()) == [fact]


def test_the_source_memory_must_be_visible(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="Alice moved to the Search team.")

    with pytest.raises(NotFound):
        triple_assert(
            principal=globex.agent, subject="Alice", predicate="works_on", object="Search", memory_id=memory.pk
        )
