"""memory_graph runs a fixed number of queries, however large the graph it walks."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.selectors import memory_graph
from tests.conftest import Tenant
from tests.knowledge.conftest import Chain


def test_a_long_chain_costs_the_same_queries_as_a_short_one(acme: Tenant, chain: Chain) -> None:
    short, long = chain(5), chain(50)

    with CaptureQueriesContext(connection) as short_walk:
        small = memory_graph(acme.agent, seed_ids=[short[0].id], max_hops=5, direction="both")
    with CaptureQueriesContext(connection) as long_walk:
        large = memory_graph(acme.agent, seed_ids=[long[0].id, long[25].id], max_hops=5, direction="both")

    assert len(small.nodes) == 5
    assert len(large.nodes) == 17  # 0-5 around the first seed, 20-30 around the second
    assert len(long_walk.captured_queries) == len(short_walk.captured_queries)
    # Reading the walked nodes' organization and repository costs nothing more.
    with CaptureQueriesContext(connection) as reading:
        [(node.organization.slug, node.repository) for node in large.nodes]
    assert len(reading.captured_queries) == 0
