"""A search's hits are whole memories: every public field as the memory reads on its own, with
its organization, repository and owner, and reading those costs no query more."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import Memory
from memories.public import memory_values
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import search


def test_hits_read_as_the_memories_do_on_their_own(acme: Tenant, make_memory: MemoryFactory) -> None:
    common = {"tags": ["release"], "metadata": {"ticket": "OPS-7"}, "importance": 7}
    written = [
        make_memory(current_content="The release checklist lives in the wiki.", source={"session": "s-1"}, **common),
        make_memory(
            scope_type="repository",
            repository="web",
            current_content="The web release checklist adds a smoke test.",
            valid_from="2020-01-01T00:00:00+00:00",
            **common,
        ),
        make_memory(acme.person, scope_type="user", current_content="My release checklist: tell the team.", **common),
    ]

    page = search(acme.person, query="release checklist", min_score=0)

    assert {hit.memory.pk for hit in page.hits} == {memory.pk for memory in written}
    with CaptureQueriesContext(connection) as reading:
        read = {
            hit.memory.pk: (
                memory_values(hit.memory),
                hit.memory.owner.username if hit.memory.owner else None,
                hit.memory.repository.slug if hit.memory.repository else None,
            )
            for hit in page.hits
        }
    assert reading.captured_queries == []
    stored = Memory.objects.select_related("owner", "repository")
    assert read == {
        memory.pk: (
            memory_values(memory),
            memory.owner.username if memory.owner else None,
            memory.repository.slug if memory.repository else None,
        )
        for memory in stored.filter(pk__in=read)
    }
    assert read[written[2].pk][1] is not None  # the person's own memory has its owner
    assert read[written[1].pk][2] == "web"
