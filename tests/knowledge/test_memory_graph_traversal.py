"""memory_graph: cycles terminate, hops, direction and relation filters, the node cap, and hidden
memories that are neither shown nor walked through."""

from __future__ import annotations

import pytest

from knowledge.links import link_remove
from knowledge.selectors import Graph, memory_graph
from memories.decisions import memory_delete
from memories.models import Memory
from memory_platform.exceptions import NotFound, ValidationError
from tests.conftest import MemoryFactory, Tenant
from tests.knowledge.conftest import Chain, Link


def _hops(graph: Graph) -> dict[str, int]:
    """Node content → distance, asserting every node appears once."""
    ids = [node.pk for node in graph.nodes]
    assert len(ids) == len(set(ids)), "a node was reported twice"
    return {node.current_content: graph.depth[node.pk] for node in graph.nodes}


@pytest.fixture
def triangle(make_memory: MemoryFactory, link: Link) -> list[Memory]:
    """A → B → C → A."""
    a, b, c = (make_memory(current_content=name) for name in "ABC")
    link(a, b)
    link(b, c)
    link(c, a)
    return [a, b, c]


def test_a_cycle_terminates_and_reports_each_node_once(acme: Tenant, triangle: list[Memory]) -> None:
    a, _, _ = triangle

    graph = memory_graph(acme.agent, seed_ids=[a.id], max_hops=5, direction="outgoing")

    assert _hops(graph) == {"A": 0, "B": 1, "C": 2}
    assert graph.truncated is False
    assert sorted((e["source"], e["target"]) for e in graph.edges) == sorted(
        (str(s.id), str(t.id))
        for s, t in [(triangle[0], triangle[1]), (triangle[1], triangle[2]), (triangle[2], triangle[0])]
    )


def test_both_directions_give_the_shortest_distance_around_a_cycle(acme: Tenant, triangle: list[Memory]) -> None:
    a, _, _ = triangle

    graph = memory_graph(acme.agent, seed_ids=[a.id], max_hops=5, direction="both")

    # C is one step back against the C → A link.
    assert _hops(graph) == {"A": 0, "B": 1, "C": 1}


def test_max_hops_limits_the_walk(acme: Tenant, chain: Chain) -> None:
    memories = chain(6)

    one = memory_graph(acme.agent, seed_ids=[memories[0].id], max_hops=1)
    three = memory_graph(acme.agent, seed_ids=[memories[0].id], max_hops=3)

    assert [node.pk for node in one.nodes] == [m.pk for m in memories[:2]]
    assert [node.pk for node in three.nodes] == [m.pk for m in memories[:4]]
    assert [three.depth[node.pk] for node in three.nodes] == [0, 1, 2, 3]
    # Only the edges between returned nodes come back.
    assert len(three.edges) == 3


def test_direction_outgoing_incoming_both(acme: Tenant, chain: Chain) -> None:
    first, middle, last = chain(3)

    def reached(direction: str) -> set[Memory]:
        return set(memory_graph(acme.agent, seed_ids=[middle.id], direction=direction).nodes)

    assert reached("outgoing") == {middle, last}
    assert reached("incoming") == {middle, first}
    assert reached("both") == {first, middle, last}


def test_relation_types_filter_which_links_are_followed(acme: Tenant, make_memory: MemoryFactory, link: Link) -> None:
    seed, dependency, contradiction, beyond = (make_memory(current_content=n) for n in ("seed", "dep", "con", "beyond"))
    link(seed, dependency, "depends_on")
    link(seed, contradiction, "contradicts")
    link(contradiction, beyond, "depends_on")

    graph = memory_graph(acme.agent, seed_ids=[seed.id], max_hops=3, relation_types=["depends_on"])

    # "beyond" is a depends_on away from "con", but "con" is only reached through contradicts.
    assert _hops(graph) == {"seed": 0, "dep": 1}
    assert [e["relation_type"] for e in graph.edges] == ["depends_on"]


def test_the_node_cap_truncates(acme: Tenant, make_memory: MemoryFactory, link: Link) -> None:
    hub = make_memory(current_content="hub")
    for n in range(5):
        link(hub, make_memory(current_content=f"spoke {n}"))

    capped = memory_graph(acme.agent, seed_ids=[hub.id], max_nodes=3)
    whole = memory_graph(acme.agent, seed_ids=[hub.id], max_nodes=6)

    assert len(capped.nodes) == 3
    assert capped.nodes[0] == hub
    assert capped.truncated is True
    kept = {str(node.pk) for node in capped.nodes}
    assert all(e["source"] in kept and e["target"] in kept for e in capped.edges)
    assert len(capped.edges) == 2
    assert len(whole.nodes) == 6
    assert whole.truncated is False


def test_a_private_memory_of_another_person_is_not_shown_nor_walked_through(
    acme: Tenant, make_memory: MemoryFactory, link: Link
) -> None:
    seed = make_memory(current_content="seed")
    private = make_memory(acme.person, scope_type="user", current_content="private note")
    behind = make_memory(current_content="behind the private note")
    beside = make_memory(current_content="beside")
    link(seed, private, principal=acme.person)
    link(private, behind, principal=acme.person)
    link(seed, beside)

    seen_by_agent = memory_graph(acme.agent, seed_ids=[seed.id], max_hops=3)
    seen_by_owner = memory_graph(acme.person, seed_ids=[seed.id], max_hops=3)

    assert _hops(seen_by_agent) == {"seed": 0, "beside": 1}
    private_id = str(private.id)
    assert all(private_id not in (e["source"], e["target"]) for e in seen_by_agent.edges)
    assert _hops(seen_by_owner) == {"seed": 0, "private note": 1, "beside": 1, "behind the private note": 2}


def test_a_hidden_node_does_not_shorten_the_distance(acme: Tenant, make_memory: MemoryFactory, link: Link) -> None:
    seed = make_memory(current_content="seed")
    private = make_memory(acme.person, scope_type="user", current_content="private note")
    one, two, target = (make_memory(current_content=n) for n in ("one", "two", "target"))
    link(seed, private, principal=acme.person)
    link(private, target, principal=acme.person)
    link(seed, one)
    link(one, two)
    link(two, target)

    graph = memory_graph(acme.agent, seed_ids=[seed.id], max_hops=3, direction="outgoing")

    assert _hops(graph) == {"seed": 0, "one": 1, "two": 2, "target": 3}


def test_a_deleted_memory_is_not_shown_nor_walked_through(acme: Tenant, chain: Chain) -> None:
    seed, deleted, _ = chain(3)
    memory_delete(principal=acme.agent, memory_id=deleted.id)

    graph = memory_graph(acme.agent, seed_ids=[seed.id], max_hops=3)

    assert graph.nodes == [seed]
    assert graph.edges == []


def test_removed_links_are_not_followed(acme: Tenant, chain: Chain) -> None:
    seed, middle, _ = chain(3)
    link_remove(principal=acme.agent, source_id=seed.id, target_id=middle.id)

    assert memory_graph(acme.agent, seed_ids=[seed.id], max_hops=3).nodes == [seed]


def test_the_outsider_gets_not_found_for_acme_seeds(acme: Tenant, globex: Tenant, chain: Chain) -> None:
    seed, _, _ = chain(3)

    with pytest.raises(NotFound, match="none of the seed memories"):
        memory_graph(globex.admin, seed_ids=[seed.id])


def test_a_deleted_seed_is_not_found(acme: Tenant, chain: Chain) -> None:
    seed, _, _ = chain(3)
    memory_delete(principal=acme.agent, memory_id=seed.id)

    with pytest.raises(NotFound):
        memory_graph(acme.agent, seed_ids=[seed.id])


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"seed_ids": []}, "seed_ids"),
        ({"max_hops": 0}, "max_hops"),
        ({"max_hops": 6}, "max_hops"),
        ({"direction": "sideways"}, "direction"),
        ({"relation_types": ["friends_with"]}, "relation_types"),
    ],
)
def test_invalid_arguments_name_the_field(acme: Tenant, chain: Chain, arguments: dict, field: str) -> None:
    seed, _ = chain(2)
    call = {"seed_ids": [seed.id]} | arguments

    with pytest.raises(ValidationError) as exc:
        memory_graph(acme.agent, **call)

    assert exc.value.details == {"field": field}
