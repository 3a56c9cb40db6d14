"""Entities: list (by name, paged), find-or-create, aliases and related entities."""

from __future__ import annotations

from uuid import UUID

import pytest

from knowledge.models import Entity
from tests.conftest import MemoryFactory
from tests.rest_api.conftest import API, Api, World, error_of


@pytest.fixture
def world(shared_world: World) -> World:
    """The module's tests share one world, built once (tests/rest_api/conftest.py: shared_world)."""
    return shared_world


ENTITY_FIELDS = {"id", "name", "entity_type", "description", "aliases", "created_at"}


def test_reader_lists_entities(api: Api, world: World) -> None:
    response = api("reader").get(f"{API}/entities/")

    assert response.status_code == 200
    body = response.json()
    assert [e["name"] for e in body["results"]] == ["payments-api", "Team Atlas"]
    assert set(body["results"][0]) == ENTITY_FIELDS
    assert body["next_cursor"] is None


def test_list_filters_by_name_and_pages(api: Api, world: World) -> None:
    reader = api("reader")
    assert [e["name"] for e in reader.get(f"{API}/entities/?name=atlas").json()["results"]] == ["Team Atlas"]

    first = reader.get(f"{API}/entities/?limit=1").json()
    second = reader.get(f"{API}/entities/?limit=1&cursor={first['next_cursor']}").json()

    assert [e["name"] for e in first["results"] + second["results"]] == ["payments-api", "Team Atlas"]
    assert second["next_cursor"] is None


def test_agent_creates_an_entity_once(api: Api, world: World) -> None:
    first = api("agent").post(f"{API}/entities/", {"name": "Team Borealis", "entity_type": "team"})
    again = api("agent").post(f"{API}/entities/", {"name": "team borealis"})

    assert first.status_code == 201, first.content
    assert (first.json()["name"], first.json()["entity_type"], first.json()["aliases"]) == (
        "Team Borealis",
        "team",
        ["Team Borealis"],
    )
    assert (again.status_code, again.json()["id"]) == (200, first.json()["id"])


def test_reader_cannot_create_an_entity(api: Api, world: World) -> None:
    error_of(api("reader").post(f"{API}/entities/", {"name": "Team Borealis"}), 403, "permission_denied")
    assert not Entity.objects.filter(name="Team Borealis").exists()


def test_retrieve_an_entity(api: Api, world: World) -> None:
    response = api("reader").get(f"{API}/entities/{world.entity.pk}/")
    assert (response.status_code, response.json()["name"]) == (200, "payments-api")
    error_of(api("reader").get(f"{API}/entities/999999/"), 404, "not_found")


def test_agent_adds_an_alias(api: Api, world: World) -> None:
    response = api("agent").post(f"{API}/entities/{world.entity.pk}/aliases/", {"alias": "payments service"})

    assert response.status_code == 200, response.content
    assert sorted(response.json()["aliases"]) == ["payments service", "payments-api"]
    found = api("reader").get(f"{API}/triples/?subject=Payments Service").json()
    assert found["subject"] == "payments-api"
    assert len(found["results"]) == 1


def test_alias_of_another_entity_is_409(api: Api, world: World) -> None:
    response = api("agent").post(f"{API}/entities/{world.entity.pk}/aliases/", {"alias": "team atlas"})
    error = error_of(response, 409, "conflict")
    assert "already names another entity" in error["message"]


def test_reader_cannot_add_an_alias(api: Api, world: World) -> None:
    error_of(api("reader").post(f"{API}/entities/{world.entity.pk}/aliases/", {"alias": "x"}), 403)
    assert world.entity.aliases.count() == 1


def test_related_entities_with_the_facts_between_them(api: Api, world: World) -> None:
    response = api("reader").get(f"{API}/entities/{world.entity.pk}/related/")

    assert response.status_code == 200
    body = response.json()
    assert body["entity"] == "payments-api"
    assert body["related"] == [{"name": "Team Atlas", "entity_type": "", "hops": 1}]
    assert [f["id"] for f in body["facts"]] == [world.triple.pk]
    assert body["truncated"] is False
    incoming = api("reader").get(f"{API}/entities/{world.entity.pk}/related/?direction=incoming").json()
    assert incoming["related"] == []


def test_related_lists_the_memories_that_mention_the_entity(api: Api, world: World, make_memory: MemoryFactory) -> None:
    said = make_memory(current_content="Deploys of payments-api page Team Atlas, never the Growth Team.")

    body = api("reader").get(f"{API}/entities/{world.entity.pk}/related/").json()

    assert said.pk in {UUID(m["id"]) for m in body["memories"]}
    mentioned = next(m for m in body["memories"] if UUID(m["id"]) == said.pk)
    assert mentioned == {"id": str(said.pk), "title": said.title, "memory_type": "fact", "status": said.status,
                         "importance": said.importance, "author": {"kind": "agent", "name": "acme-agent"},
                         "review": {"state": "unreviewed", "by": None, "at": None, "flags": []}}  # fmt: skip
    assert body["memories_total"] == len(body["memories"])
    assert {"name": "Growth Team", "memories": 1} in body["mentioned_with"]
    assert [m["name"] for m in api("reader").get(f"{API}/memories/{said.pk}/mentions/").json()] == [
        "payments-api",
        "Team Atlas",
        "Growth Team",
    ]


def test_search_and_list_filter_by_a_mentioned_entity(api: Api, world: World, make_memory: MemoryFactory) -> None:
    said = make_memory(current_content="Deploys of payments-api page Team Atlas.", status="active")
    make_memory(current_content="Deploys of the search cluster page Team Vega.", status="active")

    searched = api("reader").post(
        f"{API}/memories/search/", {"query": "who is paged on deploys", "filters": {"mentions": "Payments-API"}}
    )
    listed = api("reader").get(f"{API}/memories/?mentions=Team%20Atlas")

    assert searched.status_code == 200, searched.content
    assert str(said.pk) in [hit["id"] for hit in searched.json()["results"]]
    assert "Team Vega" not in searched.content.decode()
    assert [m["id"] for m in listed.json()["results"]] == [str(said.pk)]
    error_of(api("reader").post(f"{API}/memories/search/", {"query": "x", "filters": {"mentions": ""}}), 400)
