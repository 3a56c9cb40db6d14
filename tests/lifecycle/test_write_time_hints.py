"""Writes answer with possible_duplicates (top 3 of the same scope), never refusing the write."""

from __future__ import annotations

import pytest

from memories.hints import WriteHints, write_hints
from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import API, client_with

pytestmark = pytest.mark.django_db

RULE = "Every pull request needs one approving review before it is merged."


def test_rest_create_and_batch_name_the_near_duplicates(acme: Tenant, globex: Tenant) -> None:
    agent = client_with(acme.raw_tokens["agent"])
    body = {"scope_type": "organization", "memory_type": "convention"}
    first = agent.post(f"{API}/memories/", {**body, "current_content": RULE}).json()
    assert first["possible_duplicates"] == []
    client_with(globex.raw_tokens["agent"]).post(f"{API}/memories/", {**body, "current_content": RULE})
    agent.post(f"{API}/memories/", {**body, "current_content": RULE, "scope_type": "repository", "repository": "api"})

    second = agent.post(
        f"{API}/memories/", {**body, "current_content": "Every pull request needs an approving review before merge."}
    )
    batch = agent.post(
        f"{API}/memories/batch/",
        {"memories": [{**body, "current_content": RULE.upper()}, {**body, "current_content": "Lunch is at noon."}]},
    ).json()["results"]

    assert second.status_code == 201  # a hint, never a refusal
    [hint] = second.json()["possible_duplicates"]  # not globex's, not the repository's
    assert (hint["id"], hint["title"]) == (first["id"], first["title"]) and hint["similarity"] >= 0.85
    assert [h["id"] for h in batch[0]["memory"]["possible_duplicates"]][:1] == [first["id"]]
    assert batch[0]["memory"]["possible_duplicates"][0]["similarity"] > 0.99
    assert batch[1]["memory"]["possible_duplicates"] == []


def test_a_memory_stored_without_an_embedding_gets_no_hints(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory(current_content=RULE)
    pending = make_memory(current_content=RULE + "!")
    Memory.objects.filter(pk=pending.pk).update(embedding=None, embedding_status="pending")
    pending.refresh_from_db()

    assert write_hints([pending]) == {pending.pk: WriteHints()}
