"""POST /memories/search/: an empty first page carries ``below_floor`` {count, best_score} when the floor
left scored memories out; every other answer keeps its shape (no such key)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memories.search import term_statistics
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import API, Api, client_with

# Asserts which memories a query finds: that takes the real model.
pytestmark = pytest.mark.real_embedder

TEXTS = {
    "money": "Money amounts are stored as integer cents, never floating point numbers.",
    "deploy": "Production deploys happen on Tuesdays after the change review.",
    "coffee": "The office coffee machine is descaled every Friday.",
}
QUERY = "how do we store money amounts"
KEYS = {"results", "next_cursor", "mode", "warning"}


@pytest.fixture(autouse=True)
def _fresh_search_state(db: Any) -> None:
    term_statistics.clear()


@pytest.fixture
def corpus(acme: Tenant, make_memory: MemoryFactory) -> dict[str, str]:
    return {key: str(make_memory(current_content=text).pk) for key, text in TEXTS.items()}


def search(api: Api, role: str = "reader", **body: Any) -> dict[str, Any]:
    response = api(role).post(f"{API}/memories/search/", body)
    assert response.status_code == 200, response.content
    return dict(response.json())


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_an_empty_page_says_how_many_scored_below_the_floor_and_the_best_score(
    api: Api, corpus: dict[str, str], mode: str
) -> None:
    everything = search(api, query=QUERY, mode=mode, min_score=0, limit=50)["results"]
    best = max(hit["score"] for hit in everything)

    page = search(api, query=QUERY, mode=mode, min_score=(best + 1) / 2, limit=50)

    assert page["results"] == [] and page["next_cursor"] is None
    assert set(page) == KEYS | {"below_floor"}
    assert page["below_floor"] == {"count": len(everything), "best_score": best}
    if mode == "keyword":  # only the memory sharing the query's words was scored
        assert [hit["id"] for hit in everything] == [corpus["money"]]


@pytest.mark.parametrize("role", ["reader", "agent", "curator", "admin"])
def test_a_page_with_results_keeps_its_shape(api: Api, corpus: dict[str, str], role: str) -> None:
    page = search(api, role, query=QUERY)

    assert page["results"][0]["id"] == corpus["money"]
    assert set(page) == KEYS


def test_min_score_0_and_browsing_keep_their_shape(api: Api, corpus: dict[str, str]) -> None:
    assert set(search(api, query="what is the capital of France?", min_score=0)) == KEYS
    assert set(search(api, min_score=0.9)) == KEYS


def test_the_outsider_is_told_nothing_of_acme(api: Api, corpus: dict[str, str]) -> None:
    # Globex has no memories: acme's, all under a floor of 1, must not show up as a count either.
    page = search(api, "outsider", query=QUERY, min_score=1)

    assert page["results"] == [] and set(page) == KEYS


@pytest.mark.parametrize("path", ["memories/search/", "code/search/"])
def test_a_boolean_min_score_is_refused_not_read_as_a_number(acme: Tenant, path: str) -> None:
    response = client_with(acme.raw_tokens["agent"]).post(f"{API}/{path}", {"query": "deploys", "min_score": True})

    assert response.status_code == 400
    assert "min_score" in json.dumps(response.json())
