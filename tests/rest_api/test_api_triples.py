"""Facts (temporal triples): query, assert, invalidate."""

from __future__ import annotations

import pytest

from knowledge.models import Triple
from tests.rest_api.conftest import API, Api, World, error_of


@pytest.fixture
def world(shared_world: World) -> World:
    """The module's tests share one world, built once (tests/rest_api/conftest.py: shared_world)."""
    return shared_world


TRIPLE_FIELDS = {
    "id", "subject", "predicate", "object", "valid_from", "valid_to", "recorded_at", "expired_at", "confidence",
    "provenance", "invalidation_reason", "memory_id",
}  # fmt: skip


def test_reader_queries_current_facts(api: Api, world: World) -> None:
    response = api("reader").get(f"{API}/triples/?subject=Payments-API")

    assert response.status_code == 200
    body = response.json()
    assert body["subject"] == "payments-api"
    assert [(t["id"], t["predicate"], t["object"]) for t in body["results"]] == [
        (world.triple.pk, "owned_by", "Team Atlas")
    ]
    assert set(body["results"][0]) == TRIPLE_FIELDS


def test_unknown_subject_has_no_facts(api: Api, world: World) -> None:
    response = api("reader").get(f"{API}/triples/?subject=nobody")
    assert (response.status_code, response.json()) == (200, {"subject": "nobody", "results": []})


def test_query_needs_a_subject(api: Api) -> None:
    error = error_of(api("reader").get(f"{API}/triples/"), 400, "invalid")
    assert "subject" in error["details"]


def test_agent_asserts_a_fact_that_replaces_the_open_one(api: Api, world: World) -> None:
    body = {
        "subject": "payments-api",
        "predicate": "owned_by",
        "object": "Team Borealis",
        "confidence": 0.9,
        "provenance": "reorg announcement",
        "memory_id": str(world.memory.pk),
    }

    response = api("agent").post(f"{API}/triples/", body)

    assert response.status_code == 201, response.content
    fact = response.json()
    assert (fact["object"], fact["confidence"], fact["memory_id"]) == ("Team Borealis", 0.9, str(world.memory.pk))
    assert fact["provenance"] == {"note": "reorg announcement"}
    current = api("reader").get(f"{API}/triples/?subject=payments-api").json()["results"]
    assert [t["object"] for t in current] == ["Team Borealis"]
    history = api("reader").get(f"{API}/triples/?subject=payments-api&records=true").json()["results"]
    assert {t["object"] for t in history} == {"Team Atlas", "Team Borealis"}
    assert len(history) > len(current)


def test_asserting_what_is_believed_returns_it(api: Api, world: World) -> None:
    body = {"subject": "payments-api", "predicate": "owned_by", "object": "Team Atlas"}
    response = api("agent").post(f"{API}/triples/", body)
    assert (response.status_code, response.json()["id"]) == (200, world.triple.pk)


def test_reader_cannot_assert_or_invalidate(api: Api, world: World) -> None:
    reader = api("reader")
    body = {"subject": "payments-api", "predicate": "owned_by", "object": "Team Borealis"}
    error_of(reader.post(f"{API}/triples/", body), 403, "permission_denied")
    error_of(reader.post(f"{API}/triples/{world.triple.pk}/invalidate/", {"reason": "x"}), 403, "permission_denied")
    assert Triple.objects.count() == 1


def test_agent_invalidates_a_fact(api: Api, world: World) -> None:
    response = api("agent").post(f"{API}/triples/{world.triple.pk}/invalidate/", {"reason": "team disbanded"})

    assert response.status_code == 200, response.content
    assert response.json()["expired_at"] is not None
    assert api("reader").get(f"{API}/triples/?subject=payments-api").json()["results"] == []
    history = api("reader").get(f"{API}/triples/?subject=payments-api&records=true").json()["results"]
    assert "team disbanded" in {t["invalidation_reason"] for t in history}
    error_of(api("agent").post(f"{API}/triples/{world.triple.pk}/invalidate/", {"reason": "again"}), 404)


def test_invalidate_needs_a_reason(api: Api, world: World) -> None:
    error = error_of(api("agent").post(f"{API}/triples/{world.triple.pk}/invalidate/", {}), 400, "invalid")
    assert "reason" in error["details"]
    error_of(api("agent").post(f"{API}/triples/999999/invalidate/", {"reason": "x"}), 404, "not_found")
