"""Create, read, change and delete memories over REST: bodies, status codes and who may."""

from __future__ import annotations

import uuid

import pytest

from memories.models import Memory, MemoryVersion
from organizations.models import Repository
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import API, ROLES, Api, World, error_of, memory_body

MEMORY_FIELDS = {
    "id", "organization", "repository", "scope_type", "memory_type", "title", "current_content", "status",
    "importance", "metadata", "tags", "version", "created_at", "updated_at", "valid_from", "valid_until",
    "superseded_by", "deleted_at", "source", "author", "review", "embedding_status",
}  # fmt: skip


def test_agent_creates_a_memory(api: Api) -> None:
    body = memory_body(
        scope_type="repository",
        repository="payments-api",
        create_repository=True,
        memory_type="architecture",
        current_content="Money amounts are integers in minor units (cents); never floats.",
        importance=7,
        tags=["Payments", "money"],
        metadata={"team": "atlas"},
        status="active",
    )

    response = api("agent").post(f"{API}/memories/", body)

    assert response.status_code == 201, response.content
    data = response.json()
    assert set(data) == MEMORY_FIELDS | {"possible_duplicates", "conflicts", "notes", "suggested_tags"}
    assert response["Location"] == f"/api/v1/memories/{data['id']}/"
    stored = Memory.objects.get(pk=data["id"])
    assert (stored.organization.slug, stored.repository.slug, stored.current_content) == (  # type: ignore[union-attr]
        "acme",
        "payments-api",
        body["current_content"],
    )
    assert data["organization"] == "acme"
    assert data["repository"] == "payments-api"
    assert data["tags"] == ["payments", "money"]
    assert (data["status"], data["importance"], data["version"]) == ("active", 7, 1)
    assert data["notes"] == []  # stored as sent: nothing outside the organization's write policy
    assert data["author"] == {"kind": "agent", "name": "acme-agent"}
    assert data["review"] == {"state": "unreviewed", "by": None, "at": None, "flags": []}
    assert data["metadata"] == {"team": "atlas"}
    assert data["embedding_status"] == "ready"
    assert api("reader").get(response["Location"]).json() == {
        k: v for k, v in data.items() if k not in ("possible_duplicates", "conflicts", "notes", "suggested_tags")
    }


def test_an_unknown_repository_is_refused_with_the_known_ones(api: Api, world: World) -> None:
    body = memory_body(scope_type="repository", repository="payment-api")

    error = error_of(api("agent").post(f"{API}/memories/", body), 422, "invalid")

    assert "repository 'payment-api' does not exist in acme (known repositories: payments-api)" in error["message"]
    assert error["details"] == {"field": "repository", "known": ["payments-api"]}
    assert not Repository.objects.filter(slug="payment-api").exists()
    listed = error_of(api("agent").get(f"{API}/memories/", {"repository": "payment-api"}), 422, "invalid")
    assert listed["details"]["field"] == "filters.repository"


def test_reader_cannot_create(api: Api) -> None:
    written_before = Memory.objects.count()
    error = error_of(api("reader").post(f"{API}/memories/", memory_body()), 403, "permission_denied")
    assert "writing memories needs the agent role" in error["message"]
    assert Memory.objects.count() == written_before, "nothing is written"


def test_agent_cannot_create_a_verified_memory(api: Api) -> None:
    error = error_of(api("agent").post(f"{API}/memories/", memory_body(status="verified")), 403, "permission_denied")
    assert "needs the curator role" in error["message"]
    assert api("curator").post(f"{API}/memories/", memory_body(status="verified")).status_code == 201


def test_the_body_cannot_pick_the_organization(api: Api) -> None:
    error = error_of(api("agent").post(f"{API}/memories/", memory_body(organization="globex")), 400, "invalid")
    assert "organization" in error["details"]


def test_user_scope_needs_a_personal_token(api: Api, acme: Tenant) -> None:
    error_of(api("agent").post(f"{API}/memories/", memory_body(scope_type="user")), 422, "invalid")

    response = api("person").post(f"{API}/memories/", memory_body(scope_type="user", current_content="I like tea."))

    assert response.status_code == 201
    memory_id = response.json()["id"]
    assert api("person").get(f"{API}/memories/{memory_id}/").status_code == 200
    # Another member of the organization, even an admin, cannot see a person's own memory.
    error_of(api("admin").get(f"{API}/memories/{memory_id}/"), 404, "not_found")


def test_upsert_with_an_id_creates_then_updates(api: Api) -> None:
    memory_id = str(uuid.uuid4())
    agent = api("agent")

    created = agent.post(f"{API}/memories/", memory_body(id=memory_id, current_content="First wording."))
    updated = agent.post(f"{API}/memories/", memory_body(id=memory_id, current_content="Second wording."))

    assert (created.status_code, created.json()["id"]) == (201, memory_id)
    assert (updated.status_code, updated.json()["id"], updated.json()["version"]) == (200, memory_id, 2)
    assert "Location" not in updated
    assert Memory.objects.get(pk=memory_id).current_content == "Second wording."


def test_every_member_reads_a_memory(api: Api, world: World) -> None:
    for role in ROLES:
        response = api(role).get(f"{API}/memories/{world.memory.pk}/")

        assert response.status_code == 200
        data = response.json()
        assert set(data) == MEMORY_FIELDS
        assert (data["id"], data["current_content"]) == (str(world.memory.pk), world.memory.current_content)


def test_agent_changes_only_the_fields_sent(api: Api, world: World) -> None:
    response = api("agent").patch(
        f"{API}/memories/{world.memory.pk}/", {"importance": 6, "tags": ["money"], "reason": "caused an incident"}
    )

    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["importance"], data["tags"], data["version"], data["notes"]) == (6, ["money"], 2, [])
    assert data["current_content"] == world.memory.current_content
    version = MemoryVersion.objects.get(memory=world.memory, version=2)
    assert (version.reason, version.changed_fields) == ("caused an incident", ["importance", "tags"])


def test_patch_without_changes_keeps_the_version(api: Api, world: World) -> None:
    response = api("agent").patch(f"{API}/memories/{world.memory.pk}/", {"importance": world.memory.importance})
    assert (response.status_code, response.json()["version"]) == (200, 1)


def test_patch_validates_like_create(api: Api, world: World) -> None:
    agent = api("agent")
    error_of(agent.patch(f"{API}/memories/{world.memory.pk}/", {"importance": 42}), 400, "invalid")
    error_of(agent.patch(f"{API}/memories/{world.memory.pk}/", {"id": str(uuid.uuid4())}), 400, "invalid")
    error_of(agent.patch(f"{API}/memories/{world.memory.pk}/", {"scope_type": "repository"}), 422, "invalid")
    assert Memory.objects.get(pk=world.memory.pk).version == 1


def test_reader_cannot_change_or_delete(api: Api, world: World) -> None:
    reader = api("reader")
    error_of(reader.patch(f"{API}/memories/{world.memory.pk}/", {"importance": 9}), 403, "permission_denied")
    error_of(reader.delete(f"{API}/memories/{world.memory.pk}/"), 403, "permission_denied")

    stored = Memory.objects.get(pk=world.memory.pk)
    assert (stored.importance, stored.deleted_at, stored.version) == (world.memory.importance, None, 1)


def test_delete_is_soft_and_a_curator_restores(api: Api, world: World) -> None:
    response = api("agent").delete(f"{API}/memories/{world.memory.pk}/")

    assert response.status_code == 204
    assert response.content == b""
    error_of(api("agent").get(f"{API}/memories/{world.memory.pk}/"), 404, "not_found")
    assert Memory.objects.get(pk=world.memory.pk).deleted_at is not None
    error_of(api("agent").delete(f"{API}/memories/{world.memory.pk}/"), 404, "not_found")

    error_of(api("agent").post(f"{API}/memories/{world.memory.pk}/restore/", {}), 403, "permission_denied")
    restored = api("curator").post(f"{API}/memories/{world.memory.pk}/restore/", {"reason": "deleted by mistake"})

    assert restored.status_code == 200
    assert (restored.json()["deleted_at"], restored.json()["version"]) == (None, 3)
    assert api("agent").get(f"{API}/memories/{world.memory.pk}/").status_code == 200


def test_restoring_a_memory_that_is_not_deleted_is_409(api: Api, world: World) -> None:
    error = error_of(api("curator").post(f"{API}/memories/{world.memory.pk}/restore/", {}), 409, "conflict")
    assert "is not deleted" in error["message"]


def test_versions_are_newest_first_with_snapshots(api: Api, world: World, make_memory: MemoryFactory) -> None:
    api("agent").patch(f"{API}/memories/{world.memory.pk}/", {"importance": 5, "reason": "more important"})

    response = api("reader").get(f"{API}/memories/{world.memory.pk}/versions/")

    assert response.status_code == 200
    versions = response.json()
    assert [v["version"] for v in versions] == [2, 1]
    assert [v["change"] for v in versions] == ["update", "create"]
    assert versions[0]["reason"] == "more important"
    assert versions[0]["changed_fields"] == ["importance"]
    assert versions[0]["snapshot"]["importance"] == 5
    assert versions[1]["snapshot"]["importance"] == world.memory.importance
    assert versions[0]["actor"].startswith("token mp_")


def test_versions_of_a_deleted_memory_stay_readable(api: Api, world: World) -> None:
    response = api("reader").get(f"{API}/memories/{world.deleted.pk}/versions/")
    assert [v["change"] for v in response.json()] == ["delete", "create"]


@pytest.fixture
def world(shared_world: World) -> World:
    """The module's world, built once for its tests (tests/rest_api/conftest.py, shared_world)."""
    return shared_world
