"""GET /memories/: the search filters as query parameters, and cursor pagination."""

from __future__ import annotations

from typing import Any

import pytest

from memories.decisions import memory_delete
from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import API, Api, error_of


def ids(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {memory["id"] for memory in response.json()["results"]}


@pytest.fixture
def catalogue(acme: Tenant, make_memory: MemoryFactory) -> dict[str, Memory]:
    return {
        "fact": make_memory(memory_type="fact", tags=["ops"], importance=3, metadata={"team": "atlas", "tier": "1"}),
        "rule": make_memory(
            acme.curator, memory_type="business_rule", tags=["ops", "money"], importance=9, status="active"
        ),
        "convention": make_memory(
            memory_type="convention", scope_type="repository", repository="payments-api", metadata={"team": "atlas"}
        ),
        "other_repo": make_memory(memory_type="convention", scope_type="repository", repository="web"),
        "deleted": memory_delete(principal=acme.agent, memory_id=make_memory(memory_type="fact").pk),
    }


def test_list_is_most_important_first_without_deleted(api: Api, catalogue: dict[str, Memory]) -> None:
    response = api("reader").get(f"{API}/memories/")

    assert response.json()["next_cursor"] is None
    results = response.json()["results"]
    assert results[0]["id"] == str(catalogue["rule"].pk)
    assert {r["id"] for r in results} == {str(m.pk) for k, m in catalogue.items() if k != "deleted"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("memory_type=fact", {"fact"}),
        ("memory_type=fact&memory_type=business_rule", {"fact", "rule"}),
        ("tag=ops", {"fact", "rule"}),
        ("tag=ops&tag=money", {"rule"}),
        ("min_importance=5", {"rule"}),
        ("status=active", {"rule"}),
        ("scope_type=repository", {"convention", "other_repo"}),
        ("repository=payments-api", {"fact", "rule", "convention"}),
        ("metadata=team:atlas", {"fact", "convention"}),
        ("metadata=team:atlas&metadata=tier:1", {"fact"}),
        ("include_deleted=true&memory_type=fact", {"fact", "deleted"}),
    ],
)
def test_filters(api: Api, catalogue: dict[str, Memory], query: str, expected: set[str]) -> None:
    assert ids(api("reader").get(f"{API}/memories/?{query}")) == {str(catalogue[name].pk) for name in expected}


def test_metadata_must_be_key_value(api: Api) -> None:
    error = error_of(api("reader").get(f"{API}/memories/?metadata=team"), 400, "invalid")
    assert "'team' is not key:value" in error["details"]["metadata"][0]


def test_cursor_pages_through_everything_once(api: Api, make_memory: MemoryFactory) -> None:
    created = {str(make_memory(importance=n % 3 + 1).pk) for n in range(7)}
    reader = api("reader")

    seen: list[str] = []
    pages = 0
    url = f"{API}/memories/?limit=3"
    while True:
        body = reader.get(url).json()
        pages += 1
        seen += [memory["id"] for memory in body["results"]]
        if body["next_cursor"] is None:
            break
        url = f"{API}/memories/?limit=3&cursor={body['next_cursor']}"

    assert pages == 3
    assert len(seen) == len(set(seen)) == 7
    assert set(seen) == created


def test_cursor_of_another_listing_is_refused(api: Api, make_memory: MemoryFactory) -> None:
    for _ in range(3):
        make_memory()
    cursor = api("reader").get(f"{API}/memories/?limit=2").json()["next_cursor"]

    error = error_of(api("reader").get(f"{API}/memories/?limit=2&tag=ops&cursor={cursor}"), 422, "invalid")

    assert "cursor belongs to a different search" in error["message"]
