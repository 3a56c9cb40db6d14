"""Links between memories: create (idempotent), remove, and the links and graph of a memory."""

from __future__ import annotations

import uuid

import pytest

from knowledge.models import MemoryLink
from tests.rest_api.conftest import API, Api, World, error_of


@pytest.fixture
def world(shared_world: World) -> World:
    """The module's tests share one world, built once (tests/rest_api/conftest.py: shared_world)."""
    return shared_world


def test_agent_links_two_memories_once(api: Api, world: World) -> None:
    body = {"source_id": str(world.other.pk), "target_id": str(world.memory.pk), "relation_type": "supersedes"}

    first = api("agent").post(f"{API}/links/", body)
    again = api("agent").post(f"{API}/links/", body)

    assert first.status_code == 201, first.content
    link = first.json()
    assert set(link) == {"id", "source_id", "target_id", "relation_type", "created_at"}
    assert (link["source_id"], link["target_id"], link["relation_type"]) == (
        str(world.other.pk),
        str(world.memory.pk),
        "supersedes",
    )
    assert (again.status_code, again.json()) == (200, link)
    assert MemoryLink.objects.filter(pk=link["id"], removed_at__isnull=True).exists()


def test_link_body_is_checked(api: Api, world: World) -> None:
    agent = api("agent")
    error = error_of(agent.post(f"{API}/links/", {"source_id": "x", "target_id": str(world.memory.pk)}), 400)
    assert "source_id" in error["details"]
    body = {"source_id": str(world.other.pk), "target_id": str(world.memory.pk), "relation_type": "likes"}
    assert "relation_type" in error_of(agent.post(f"{API}/links/", body), 400)["details"]
    missing = uuid.uuid4()
    error = error_of(agent.post(f"{API}/links/", {"source_id": str(missing), "target_id": str(world.memory.pk)}), 404)
    assert str(missing) in error["message"]


def test_reader_cannot_link_or_unlink(api: Api, world: World) -> None:
    reader = api("reader")
    error_of(
        reader.post(f"{API}/links/", {"source_id": str(world.other.pk), "target_id": str(world.memory.pk)}),
        403,
        "permission_denied",
    )
    error_of(reader.delete(f"{API}/links/{world.link.pk}/"), 403, "permission_denied")
    assert MemoryLink.objects.filter(removed_at__isnull=True).count() == 1


def test_agent_removes_a_link(api: Api, world: World) -> None:
    response = api("agent").delete(f"{API}/links/{world.link.pk}/")

    assert response.status_code == 204
    assert MemoryLink.objects.get(pk=world.link.pk).removed_at is not None
    error_of(api("agent").delete(f"{API}/links/{world.link.pk}/"), 404, "not_found")
    assert api("reader").get(f"{API}/memories/{world.memory.pk}/links/").json() == []


def test_links_of_a_memory_in_both_directions(api: Api, world: World) -> None:
    for memory in (world.memory, world.other):
        response = api("reader").get(f"{API}/memories/{memory.pk}/links/")
        assert response.status_code == 200
        assert [(link["id"], link["relation_type"]) for link in response.json()] == [(world.link.pk, "depends_on")]


def test_graph_around_a_memory(api: Api, world: World) -> None:
    response = api("reader").get(f"{API}/memories/{world.memory.pk}/graph/")

    assert response.status_code == 200
    graph = response.json()
    assert [(node["id"], node["hops"]) for node in graph["nodes"]] == [
        (str(world.memory.pk), 0),
        (str(world.other.pk), 1),
    ]
    assert graph["edges"] == [
        {"source": str(world.memory.pk), "target": str(world.other.pk), "relation_type": "depends_on"}
    ]
    assert graph["truncated"] is False


def test_graph_follows_only_the_asked_direction_and_relations(api: Api, world: World) -> None:
    reader = api("reader")
    incoming = reader.get(f"{API}/memories/{world.memory.pk}/graph/?direction=incoming").json()
    other_relation = reader.get(f"{API}/memories/{world.memory.pk}/graph/?relation_type=supersedes").json()
    both = reader.get(
        f"{API}/memories/{world.memory.pk}/graph/?relation_type=supersedes&relation_type=depends_on&max_hops=1"
    ).json()

    assert [node["id"] for node in incoming["nodes"]] == [str(world.memory.pk)]
    assert [node["id"] for node in other_relation["nodes"]] == [str(world.memory.pk)]
    assert len(both["nodes"]) == 2
