"""Curation over REST: verify, lock, unlock, deprecate and invalidate, and what a lock forbids."""

from __future__ import annotations

import uuid

import pytest

from memories.models import Memory, MemoryVersion
from tests.rest_api.conftest import API, Api, World, error_of, memory_body


@pytest.mark.parametrize(
    ("action", "status"), [("verify", "verified"), ("lock", "locked"), ("deprecate", "deprecated")]
)
def test_curator_sets_the_status(api: Api, world: World, action: str, status: str) -> None:
    response = api("curator").post(f"{API}/memories/{world.memory.pk}/{action}/", {"reason": "reviewed"})

    assert response.status_code == 200, response.content
    assert (response.json()["status"], response.json()["version"]) == (status, 2)
    version = MemoryVersion.objects.get(memory=world.memory, version=2)
    assert (version.change, version.reason) == ("status", "reviewed")


def test_agent_cannot_curate(api: Api, world: World) -> None:
    # Every role against every action is in test_api_role_matrix; here, that nothing changes.
    for action, target in (("verify", world.memory), ("unlock", world.locked), ("restore", world.deleted)):
        error = error_of(api("agent").post(f"{API}/memories/{target.pk}/{action}/", {}), 403, "permission_denied")
        assert "needs the curator role" in error["message"]
        stored = Memory.objects.get(pk=target.pk)
        assert (stored.version, stored.status, stored.deleted_at) == (target.version, target.status, target.deleted_at)


def test_action_body_is_checked(api: Api, world: World) -> None:
    error = error_of(api("curator").post(f"{API}/memories/{world.memory.pk}/verify/", {"why": "x"}), 400, "invalid")
    assert "why" in error["details"]


def test_agent_cannot_change_a_locked_memory(api: Api, world: World) -> None:
    agent = api("agent")
    url = f"{API}/memories/{world.locked.pk}/"

    for response in (
        agent.patch(url, {"current_content": "Releases happen on Fridays."}),
        agent.patch(url, {"status": "active"}),
        agent.delete(url),
        agent.post(f"{url}invalidate/", {"reason": "moved to Fridays"}),
        agent.post(f"{API}/memories/", memory_body(id=str(world.locked.pk), current_content="Fridays.")),
        agent.post(f"{API}/links/", {"source_id": str(world.memory.pk), "target_id": str(world.locked.pk)}),
    ):
        error = error_of(response, 403, "locked")
        assert "is locked" in error["message"]

    stored = Memory.objects.get(pk=world.locked.pk)
    assert (stored.current_content, stored.status, stored.deleted_at, stored.version) == (
        "Releases happen on Tuesdays.",
        "locked",
        None,
        world.locked.version,
    )


def test_curator_may_change_a_locked_memory(api: Api, world: World) -> None:
    url = f"{API}/memories/{world.locked.pk}/"

    response = api("curator").patch(url, {"current_content": "Releases happen on Wednesdays."})

    assert response.status_code == 200
    assert (response.json()["current_content"], response.json()["status"]) == (
        "Releases happen on Wednesdays.",
        "locked",
    )


def test_unlock_leaves_it_verified_and_editable_again(api: Api, world: World) -> None:
    response = api("curator").post(f"{API}/memories/{world.locked.pk}/unlock/", {"reason": "needs a revision"})

    assert (response.status_code, response.json()["status"]) == (200, "verified")
    assert response.json()["review"]["state"] == "verified" and response.json()["review"]["by"] == "acme-curator"
    edited = api("agent").patch(f"{API}/memories/{world.locked.pk}/", {"current_content": "Releases on Fridays."})
    # Editable again, and the edit is unreviewed: a draft until a curator reviews the change.
    assert (edited.status_code, edited.json()["status"]) == (200, "draft")
    assert edited.json()["review"]["state"] == "unreviewed"
    assert [note["code"] for note in edited.json()["notes"]] == ["reviewed_changed", "status"]


def test_agent_invalidates_a_memory_naming_its_successor(api: Api, world: World) -> None:
    response = api("agent").post(
        f"{API}/memories/{world.memory.pk}/invalidate/",
        {"reason": "we moved to a money type", "superseded_by": str(world.other.pk)},
    )

    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["status"], data["superseded_by"]) == ("deprecated", str(world.other.pk))
    assert data["valid_until"] is not None
    assert MemoryVersion.objects.get(memory=world.memory, version=2).reason == "we moved to a money type"


def test_invalidate_needs_a_reason_and_a_visible_successor(api: Api, world: World) -> None:
    agent = api("agent")
    url = f"{API}/memories/{world.memory.pk}/invalidate/"
    error = error_of(agent.post(url, {}), 400, "invalid")
    assert error["details"] == {"reason": ["This field is required."]}

    missing = uuid.uuid4()
    error = error_of(agent.post(url, {"reason": "old", "superseded_by": str(missing)}), 404, "not_found")
    assert f"memory {missing} (superseded_by) not found" in error["message"]

    error = error_of(agent.post(url, {"reason": "old", "superseded_by": str(world.memory.pk)}), 422, "invalid")
    assert "cannot supersede itself" in error["message"]
    assert Memory.objects.get(pk=world.memory.pk).status == "active"


def test_deprecated_memories_leave_the_default_list(api: Api, world: World) -> None:
    api("curator").post(f"{API}/memories/{world.memory.pk}/deprecate/", {})

    listed = {m["id"] for m in api("reader").get(f"{API}/memories/").json()["results"]}
    asked = api("reader").get(f"{API}/memories/?status=deprecated").json()["results"]

    assert str(world.memory.pk) not in listed
    assert {str(world.memory.pk), str(world.deprecated.pk)} <= {m["id"] for m in asked}
    assert {m["status"] for m in asked} == {"deprecated"}, "the filter lists deprecated memories only"
    assert not listed & {m["id"] for m in asked}


def test_reactivate_brings_back_the_status_before_deprecation(api: Api, world: World) -> None:
    curator = api("curator")
    curator.post(f"{API}/memories/{world.memory.pk}/verify/", {"reason": "checked"})
    curator.post(f"{API}/memories/{world.memory.pk}/deprecate/", {"reason": "looked obsolete"})

    response = curator.post(f"{API}/memories/{world.memory.pk}/reactivate/", {"reason": "still true"})

    assert response.status_code == 200, response.content
    assert (response.json()["status"], response.json()["version"]) == ("verified", 4)
    version = MemoryVersion.objects.get(memory=world.memory, version=4)
    assert (version.change, version.reason) == ("reactivate", "still true")
    error = error_of(curator.post(f"{API}/memories/{world.memory.pk}/reactivate/", {}), 409, "conflict")
    assert "not deprecated" in error["message"]


def test_revert_writes_a_new_version_with_the_old_fields(api: Api, world: World) -> None:
    curator = api("curator")
    url = f"{API}/memories/{world.memory.pk}/"
    curator.patch(url, {"current_content": "Payments store money as floats.", "importance": 9, "tags": ["money"]})
    curator.post(f"{url}lock/", {"reason": "agreed"})

    response = curator.post(f"{url}revert/", {"version": 1, "reason": "the edit was wrong"})

    assert response.status_code == 200, response.content
    body = response.json()
    original = MemoryVersion.objects.get(memory=world.memory, version=1).snapshot
    assert body["version"] == 4
    for field in ("current_content", "importance", "tags", "status", "title"):
        assert body[field] == original[field], field
    version = MemoryVersion.objects.get(memory=world.memory, version=4)
    assert version.change == "revert"
    assert version.reason == "back to version 1: the edit was wrong"
    assert {"current_content", "importance", "tags", "status"} <= set(version.changed_fields)
    # History is kept whole: versions 2 and 3 still read as they were.
    assert MemoryVersion.objects.get(memory=world.memory, version=2).snapshot["importance"] == 9
    assert Memory.objects.get(pk=world.memory.pk).embedding_status in ("ready", "pending")


def test_revert_to_a_missing_version_or_a_non_number_is_refused(api: Api, world: World) -> None:
    curator = api("curator")
    error = error_of(curator.post(f"{API}/memories/{world.memory.pk}/revert/", {"version": 7}), 404, "not_found")
    assert "no version 7" in error["message"]
    error_of(curator.post(f"{API}/memories/{world.memory.pk}/revert/", {"version": "one"}), 400, "invalid")
    assert Memory.objects.get(pk=world.memory.pk).version == world.memory.version


def test_revert_to_the_current_state_writes_nothing(api: Api, world: World) -> None:
    response = api("curator").post(f"{API}/memories/{world.memory.pk}/revert/", {"version": 1})
    assert response.status_code == 200
    assert response.json()["version"] == 1
    assert MemoryVersion.objects.filter(memory=world.memory).count() == 1


@pytest.fixture
def world(shared_world: World) -> World:
    """The module's world, built once for its tests (tests/rest_api/conftest.py, shared_world)."""
    return shared_world
