"""Proposals over REST: list, apply with a reason, undo, dismiss; consolidate; runs."""

from __future__ import annotations

import pytest

from lifecycle.consolidation import consolidation_run
from memories.models import Memory, MemoryVersion
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import API, Api, error_of

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

RULE = "Never deploy to production on Friday afternoons."


@pytest.fixture
def paraphrases(acme: Tenant, make_memory: MemoryFactory) -> list[Memory]:
    first = make_memory(current_content=RULE, tags=["deploy"])
    second = make_memory(current_content="Do not deploy to production on a Friday afternoon.", tags=["friday"])
    consolidation_run(organization=acme.organization)
    return [first, second]


def test_a_curator_applies_a_proposal_with_a_reason_then_undoes_it(api: Api, paraphrases: list[Memory]) -> None:
    curator = api("curator")
    [proposal] = curator.get(f"{API}/proposals/").json()["results"]
    assert sorted(proposal["memory_ids"]) == sorted(str(m.pk) for m in paraphrases)
    assert {m["title"] for m in proposal["memories"]} == {m.title for m in paraphrases}
    assert proposal["evidence"]["similarity"] >= 0.85

    applied = curator.post(
        f"{API}/proposals/{proposal['id']}/apply/",
        {"reason": "one rule", "content": "No production deploys on Friday."},
    )

    assert applied.status_code == 200, applied.content
    assert applied.json()["state"] == "applied" and applied.json()["reason"] == "one rule"
    survivor = Memory.objects.get(pk=applied.json()["survivor_id"])
    assert survivor.current_content == "No production deploys on Friday."
    assert set(survivor.tags) == {"deploy", "friday"}
    assert MemoryVersion.objects.filter(memory=survivor, change="merge", reason="one rule").exists()

    undone = curator.post(f"{API}/proposals/{proposal['id']}/undo/", {"reason": "two rules after all"})

    assert undone.json()["state"] == "undone"
    assert [Memory.objects.get(pk=m.pk).current_content for m in paraphrases] == [
        m.current_content for m in paraphrases
    ]
    again = curator.post(f"{API}/proposals/{proposal['id']}/undo/", {})
    error_of(again, 409, "conflict")


def test_a_dismissed_proposal_is_gone_from_the_queue(api: Api, acme: Tenant, paraphrases: list[Memory]) -> None:
    curator = api("curator")
    [proposal] = curator.get(f"{API}/proposals/").json()["results"]

    dismissed = curator.post(f"{API}/proposals/{proposal['id']}/dismiss/", {"reason": "different rules"})
    consolidation_run(organization=acme.organization, full=True)

    assert dismissed.json()["state"] == "dismissed"
    assert curator.get(f"{API}/proposals/").json()["results"] == []
    assert [p["id"] for p in curator.get(f"{API}/proposals/?state=dismissed").json()["results"]] == [proposal["id"]]


def test_agents_consolidate_and_see_runs(api: Api, make_memory: MemoryFactory, paraphrases: list[Memory]) -> None:
    agent = api("agent")

    candidates = agent.post(f"{API}/memories/consolidate/", {}).json()
    merged = agent.post(f"{API}/memories/consolidate/", {"memory_ids": [str(m.pk) for m in paraphrases]})
    runs = agent.get(f"{API}/lifecycle/runs/?kind=consolidation").json()["results"]

    assert candidates["outcome"] == "candidates" and candidates["clusters"][0]["proposal_id"]
    assert merged.status_code == 200 and merged.json()["outcome"] == "merged"
    assert len(merged.json()["superseded"]) == 1
    assert runs[0]["status"] == "completed" and runs[0]["counts"]["examined"] == 2


def test_bad_requests_say_what_to_fix(api: Api, paraphrases: list[Memory]) -> None:
    curator = api("curator")

    error_of(curator.get(f"{API}/proposals/?state=maybe"), 400)
    error_of(curator.post(f"{API}/memories/consolidate/", {"memory_ids": [str(paraphrases[0].pk)]}), 422)
    error_of(curator.post(f"{API}/proposals/00000000-0000-4000-8000-000000000000/apply/", {}), 404)
    error_of(curator.post(f"{API}/memories/consolidate/", {"memory_ids": "x"}), 400)
