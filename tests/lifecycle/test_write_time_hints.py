"""Writes answer with possible_duplicates (top 3 of the same scope), never refusing the write."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

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


def test_one_call_hints_each_memory_from_its_own_scope_and_organization(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory
) -> None:
    in_acme = make_memory(current_content=RULE)
    in_api = make_memory(current_content=RULE, scope_type="repository", repository="api")
    in_globex = make_memory(globex.agent, current_content=RULE)
    variant = "Every pull request needs an approving review before merge."
    written = [
        make_memory(current_content=variant),
        make_memory(current_content=variant, scope_type="repository", repository="api"),
        make_memory(globex.agent, current_content=variant),
    ]

    with CaptureQueriesContext(connection) as captured:
        hints = write_hints(written)

    nearest = [[hint.id for hint in hints[memory.pk].possible_duplicates][:1] for memory in written]
    assert nearest == [[in_acme.pk], [in_api.pk], [in_globex.pk]]
    # One statement an organization, whatever the number of memories.
    assert sum("CROSS JOIN LATERAL" in query["sql"] for query in captured.captured_queries) == 2
