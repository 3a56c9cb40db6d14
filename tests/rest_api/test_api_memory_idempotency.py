"""Idempotency-Key makes a retried create safe: same key and content → the first memory, 200."""

from __future__ import annotations

from memories.models import Memory
from tests.rest_api.conftest import API, Api, error_of, memory_body


def test_replay_with_the_header_returns_the_first_memory(api: Api) -> None:
    agent = api("agent")
    headers = {"HTTP_IDEMPOTENCY_KEY": "deploy-note-1"}

    first = agent.post(f"{API}/memories/", memory_body(), **headers)
    again = agent.post(f"{API}/memories/", memory_body(), **headers)

    assert first.status_code == 201
    assert first["Location"] == f"/api/v1/memories/{first.json()['id']}/"
    assert again.status_code == 200
    assert "Location" not in again
    assert again.json() == first.json()
    assert Memory.objects.count() == 1


def test_replay_with_the_body_key_returns_the_first_memory(api: Api) -> None:
    agent = api("agent")

    first = agent.post(f"{API}/memories/", memory_body(idempotency_key="k-1"))
    again = agent.post(f"{API}/memories/", memory_body(idempotency_key="k-1"))

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]


def test_header_and_body_key_are_the_same_key(api: Api) -> None:
    agent = api("agent")
    first = agent.post(f"{API}/memories/", memory_body(), HTTP_IDEMPOTENCY_KEY="k-2")
    again = agent.post(f"{API}/memories/", memory_body(idempotency_key="k-2"))
    assert (again.status_code, again.json()["id"]) == (200, first.json()["id"])


def test_same_key_with_other_content_is_409(api: Api) -> None:
    agent = api("agent")
    first = agent.post(f"{API}/memories/", memory_body(), HTTP_IDEMPOTENCY_KEY="k-3")

    response = agent.post(
        f"{API}/memories/", memory_body(current_content="Deploys run at midnight."), HTTP_IDEMPOTENCY_KEY="k-3"
    )

    error = error_of(response, 409, "conflict")
    assert "was already used for different content" in error["message"]
    assert error["details"] == {"id": first.json()["id"]}
    assert Memory.objects.get().current_content == "Deploys run at noon."


def test_different_keys_create_different_memories(api: Api) -> None:
    agent = api("agent")
    first = agent.post(f"{API}/memories/", memory_body(), HTTP_IDEMPOTENCY_KEY="k-4")
    second = agent.post(f"{API}/memories/", memory_body(), HTTP_IDEMPOTENCY_KEY="k-5")
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["id"] != second.json()["id"]


def test_header_and_body_key_that_differ_are_400(api: Api) -> None:
    response = api("agent").post(f"{API}/memories/", memory_body(idempotency_key="body-key"), HTTP_IDEMPOTENCY_KEY="x")

    error = error_of(response, 400, "invalid")
    assert "idempotency_key" in error["details"]
    assert "differs from the Idempotency-Key header" in error["message"]
    assert not Memory.objects.exists()


def test_keys_belong_to_one_organization(api: Api) -> None:
    acme_memory = api("agent").post(f"{API}/memories/", memory_body(), HTTP_IDEMPOTENCY_KEY="shared")
    globex_memory = api("outsider").post(f"{API}/memories/", memory_body(), HTTP_IDEMPOTENCY_KEY="shared")

    assert (acme_memory.status_code, globex_memory.status_code) == (201, 201)
    assert globex_memory.json()["organization"] == "globex"
    assert globex_memory.json()["id"] != acme_memory.json()["id"]


def test_too_long_header_key_is_400(api: Api) -> None:
    response = api("agent").post(f"{API}/memories/", memory_body(), HTTP_IDEMPOTENCY_KEY="k" * 1000)

    error = error_of(response, 400, "invalid")
    assert error["details"] == {"Idempotency-Key": ["the Idempotency-Key header must be 1 to 200 characters"]}
    assert not Memory.objects.exists()
