"""A densely linked graph is walked in work bounded by nodes * hops, not by the number of paths.

26 memories all linked to each other have about 6 million simple paths of five links from one
seed; a walk that enumerated them would run for tens of seconds. The statement timeout here is a
guard with a wide margin (the bounded walk takes milliseconds), not a measurement.
"""

from __future__ import annotations

import itertools

from django.db import connection

from knowledge.models import MemoryLink
from knowledge.selectors import memory_graph
from tests.conftest import MemoryFactory, Tenant


def test_a_fully_linked_graph_is_walked_within_the_statement_timeout(acme: Tenant, make_memory: MemoryFactory) -> None:
    memories = [make_memory(current_content=f"Service {n} talks to every other service.") for n in range(26)]
    MemoryLink.objects.bulk_create(
        MemoryLink(organization=acme.organization, source=a, target=b) for a, b in itertools.permutations(memories, 2)
    )
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = '5s'")

    graph = memory_graph(acme.agent, seed_ids=[memories[0].id], max_hops=5, direction="both")

    assert {node.pk for node in graph.nodes} == {m.pk for m in memories}
    assert {graph.depth[m.pk] for m in memories[1:]} == {1}
    assert graph.truncated is False
