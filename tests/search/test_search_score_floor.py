"""The floor: a search with a query returns the memories that match it, not the whole organization.

``min_score`` sets it (0 to 1); by default SEARCH_MIN_SCORE. Without a query there is no floor.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

RULES = {
    "friday": "Never deploy to production on Friday afternoons; wait for Monday.",
    "cents": "Payments store money as integer cents, never floats.",
    "ruff": "Python code is linted with ruff before every commit.",
    "postgres": "We chose PostgreSQL for every service that needs a database.",
    "react": "The frontend is a React single-page app built with Vite.",
    "branches": "Feature branches are named after the ticket key, e.g. PAY-123-refund-fix.",
    "reviews": "Every pull request needs one approval from a code owner.",
    "secrets": "Secrets live in the vault; never commit them to git.",
    "retries": "The checkout service retries card payments three times with exponential backoff.",
    "oncall": "On-call engineers hand over on Monday mornings at 10:00.",
    "json": "API responses use snake_case field names.",
}


@pytest.fixture
def rules(make_memory: MemoryFactory) -> dict[str, Any]:
    return {key: make_memory(current_content=text, status="active").pk for key, text in RULES.items()}


def test_a_question_nothing_answers_returns_nothing(acme: Tenant, rules: dict[str, Any]) -> None:
    assert search(acme.agent, query="what is the capital of France?").hits == []
    # The whole organization is still there for whoever asks for every candidate.
    everything = search(acme.agent, query="what is the capital of France?", min_score=0, limit=50)
    assert set(hit_ids(everything)) == set(rules.values())


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("can I ship on friday afternoon?", "friday"),
        ("how do we store amounts of money?", "cents"),
        ("who reviews pull requests?", "reviews"),
        ("when is the on-call handover?", "oncall"),
    ],
)
def test_a_question_memory_answers_finds_it_first_and_little_else(
    acme: Tenant, rules: dict[str, Any], query: str, answer: str
) -> None:
    page = search(acme.agent, query=query)

    assert hit_ids(page)[0] == rules[answer]
    assert len(page.hits) <= 3, [hit.memory.current_content for hit in page.hits]
    assert all((hit.score or 0) >= settings.SEARCH_MIN_SCORE for hit in page.hits)


def test_recall_of_an_unrelated_task_lists_no_unrelated_memory(acme: Tenant, rules: dict[str, Any]) -> None:
    # The example: refactoring the React checkout page listed all eleven memories.
    page = search(acme.agent, query="refactor the React checkout page", limit=50)

    assert len(page.hits) <= 2
    assert set(hit_ids(page)) <= {rules["react"], rules["retries"]}


def test_min_score_raises_and_lowers_the_floor(acme: Tenant, rules: dict[str, Any]) -> None:
    query = "how should I name my git branch?"
    default = search(acme.agent, query=query, limit=50)
    strict = search(acme.agent, query=query, limit=50, min_score=0.2)
    loose = search(acme.agent, query=query, limit=50, min_score=0.001)

    assert set(hit_ids(strict)) <= set(hit_ids(default)) <= set(hit_ids(loose))
    assert len(hit_ids(loose)) > len(hit_ids(strict))
    assert all((hit.score or 0) >= 0.2 for hit in strict.hits)
    assert all((hit.score or 0) >= 0.001 for hit in loose.hits)


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_every_mode_applies_the_floor(acme: Tenant, rules: dict[str, Any], mode: str) -> None:
    everything = search(acme.agent, query="can I ship on friday afternoon?", mode=mode, min_score=0, limit=50)
    scores = [hit.score or 0.0 for hit in everything.hits]
    floor = (scores[0] + scores[1]) / 2 if len(scores) > 1 else scores[0] / 2  # between two results
    page = search(acme.agent, query="can I ship on friday afternoon?", mode=mode, min_score=floor, limit=50)

    assert [hit.memory.pk for hit in everything.hits if (hit.score or 0) >= floor] == hit_ids(page)
    assert hit_ids(page)[0] == rules["friday"]
    if mode != "keyword":  # keyword search only ever returns word matches
        assert len(page.hits) < len(everything.hits)


def test_browsing_has_no_floor(acme: Tenant, rules: dict[str, Any]) -> None:
    assert len(search(acme.agent, limit=50, min_score=0.9).hits) == len(rules)


@pytest.mark.parametrize("value", [-0.1, 1.5, "high", True])
def test_a_bad_min_score_is_refused_with_what_to_send(acme: Tenant, value: Any) -> None:
    with pytest.raises(ValidationError, match="min_score must be a number from 0 to 1"):
        search(acme.agent, query="deploys", min_score=value)
