"""POST /memories/search/: hybrid, vector and keyword search with filters and cursor pages."""

from __future__ import annotations

from typing import Any

import pytest

from memories.access import flush_access
from memories.search import term_statistics
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import API, Api, error_of

# Asserts which memories a query finds (and in what order): that takes the real model.
pytestmark = pytest.mark.real_embedder

MONEY = "Money amounts are stored as integer cents, never floating point numbers."
DEPLOY = "Production deploys happen on Tuesdays after the change review."
COFFEE = "The office coffee machine is descaled every Friday."


@pytest.fixture(autouse=True)
def _fresh_search_state(db: Any) -> None:
    term_statistics.clear()
    flush_access()


@pytest.fixture
def corpus(acme: Tenant, make_memory: MemoryFactory) -> dict[str, str]:
    return {
        "money": str(make_memory(current_content=MONEY, tags=["payments"], importance=8).pk),
        "deploy": str(make_memory(current_content=DEPLOY, memory_type="decision_log").pk),
        "coffee": str(make_memory(current_content=COFFEE).pk),
    }


def search(api: Api, role: str = "reader", **body: Any) -> dict[str, Any]:
    response = api(role).post(f"{API}/memories/search/", body)
    assert response.status_code == 200, response.content
    return dict(response.json())


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_each_mode_finds_the_matching_memory_first(api: Api, corpus: dict[str, str], mode: str) -> None:
    page = search(api, query="how do we store money amounts", mode=mode)

    assert page["mode"] == mode
    assert page["warning"] is None
    first = page["results"][0]
    assert first["id"] == corpus["money"]
    assert first["current_content"] == MONEY
    assert isinstance(first["relevance"], float)
    if mode == "keyword":
        assert first["similarity"] is None
    else:
        assert 0 < first["similarity"] <= 1


def test_keyword_mode_only_returns_word_matches(api: Api, corpus: dict[str, str]) -> None:
    page = search(api, query="coffee machine", mode="keyword")
    assert [hit["id"] for hit in page["results"]] == [corpus["coffee"]]


def test_default_mode_is_hybrid(api: Api, corpus: dict[str, str]) -> None:
    assert search(api, query="deploys")["mode"] == "hybrid"


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"memory_type": ["decision_log"]}, {"deploy"}),
        ({"tags": ["payments"]}, {"money"}),
        ({"min_importance": 5}, {"money"}),
    ],
)
def test_filters_narrow_the_results(
    api: Api, corpus: dict[str, str], filters: dict[str, Any], expected: set[str]
) -> None:
    page = search(api, query="money deploys coffee", filters=filters, min_score=0)
    assert {hit["id"] for hit in page["results"]} == {corpus[name] for name in expected}


def test_results_carry_a_score_and_min_score_sets_the_floor(api: Api, corpus: dict[str, str]) -> None:
    default = search(api, query="how do we store money amounts")["results"]
    everything = search(api, query="how do we store money amounts", min_score=0)["results"]
    between = (everything[0]["score"] + everything[1]["score"]) / 2
    strict = search(api, query="how do we store money amounts", min_score=between)["results"]

    assert [hit["id"] for hit in strict] == [corpus["money"]]
    assert default[0]["id"] == corpus["money"]
    assert len(strict) <= len(default) < len(everything) == len(corpus)
    scores = [hit["score"] for hit in everything]
    assert all(0 <= score <= 1 for score in scores) and scores == sorted(scores, reverse=True)


def test_browsing_has_no_score(api: Api, corpus: dict[str, str]) -> None:
    results = search(api, min_score=0.9)["results"]

    assert len(results) == len(corpus)
    assert {hit["score"] for hit in results} == {None}


@pytest.mark.parametrize("value", [-0.5, 1.5, "high"])
def test_a_bad_min_score_is_400(api: Api, value: Any) -> None:
    response = api("reader").post(f"{API}/memories/search/", {"query": "money", "min_score": value})

    error = error_of(response, 400, "invalid")
    assert "min_score" in error["details"]


def test_unknown_filter_is_400(api: Api) -> None:
    error = error_of(api("reader").post(f"{API}/memories/search/", {"filters": {"colour": "red"}}), 400, "invalid")
    assert list(error["details"]["filters"]) == ["colour"]
    assert "unknown field; known fields:" in error["details"]["filters"]["colour"][0]


@pytest.mark.parametrize("query", ["", "release notes"])
def test_cursor_pages_without_duplicates(api: Api, make_memory: MemoryFactory, query: str) -> None:
    created = {str(make_memory(current_content=f"Release notes item {n} for the mobile app.").pk) for n in range(7)}

    seen: list[str] = []
    cursor = None
    for _ in range(10):
        page = search(api, query=query, limit=3, cursor=cursor, min_score=0)
        seen += [hit["id"] for hit in page["results"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break

    assert len(seen) == len(set(seen))
    assert set(seen) == created


def test_cursor_of_another_query_is_422(api: Api, make_memory: MemoryFactory) -> None:
    for n in range(3):
        make_memory(current_content=f"Release notes item {n}.")
    cursor = search(api, query="release", limit=1)["next_cursor"]
    assert cursor is not None

    error = error_of(
        api("reader").post(f"{API}/memories/search/", {"query": "notes", "limit": 1, "cursor": cursor}), 422
    )
    assert error["details"] == {"field": "cursor"}


def test_writes_of_the_person_stay_private_in_search(api: Api, acme: Tenant) -> None:
    api("person").post(
        f"{API}/memories/",
        {"scope_type": "user", "memory_type": "preference", "current_content": "I prefer tabs over spaces."},
    )

    assert search(api, "person", query="tabs spaces")["results"]
    assert search(api, "admin", query="tabs spaces")["results"] == []
