"""Code search's score is the calibrated probability memory search reports: in [0, 1], the results
ordered by it, a function that does what the query says first, and a query nothing answers left
with nothing at the default floor (CODE_SEARCH_MIN_SCORE), though it has candidates at min_score 0."""

from __future__ import annotations

from typing import Any

import pytest

from code_index.public import hit_values
from code_index.search import CodeSearchParams, code_search
from memory_platform.exceptions import ValidationError
from organizations.principal import Principal
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

NONSENSE = "purple elephant sings opera under the frozen moon"


def search(principal: Principal, query: str, **filters: Any) -> list[dict[str, Any]]:
    return [hit_values(hit) for hit in code_search(principal, CodeSearchParams.build(query=query, **filters)).hits]


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_scores_are_probabilities_best_first(indexed: Tenant, mode: str) -> None:
    results = search(indexed.reader, "retry the request with a growing delay", mode=mode, min_score=0, limit=30)

    scores = [hit["score"] for hit in results]
    assert len(scores) > 3
    assert all(0 <= score <= 1 for score in scores)
    assert scores == sorted(scores, reverse=True)


def test_the_function_that_does_it_ranks_first_and_scores_far_above_noise(indexed: Tenant) -> None:
    best = search(indexed.reader, "wait longer after every failed attempt, with random jitter")[0]
    noise = search(indexed.reader, NONSENSE, min_score=0)[0]

    assert (best["file_path"], best["name"]) == ("src/retry.py", "RetryPolicy")  # its delay() adds the jitter
    # Calibrated scores of a single right answer among look-alikes run low (code_index/model.py); a
    # real match still stands several times over the floor and over what a nonsense query reaches.
    assert best["score"] >= 0.02 and best["score"] >= 5 * noise["score"]


def test_a_query_nothing_answers_returns_nothing_at_the_default_floor(indexed: Tenant) -> None:
    result = code_search(indexed.reader, CodeSearchParams.build(query=NONSENSE))

    assert result.hits == []
    assert result.below_floor is not None and result.below_floor.count > 0
    assert result.below_floor.best_score < 0.01
    unfloored = search(indexed.reader, NONSENSE, min_score=0)
    assert unfloored and max(hit["score"] for hit in unfloored) < 0.01


def test_the_floor_is_a_setting_and_a_parameter(indexed: Tenant, settings: Any) -> None:
    query = "parse an amount of money written in cents"
    every = search(indexed.reader, query, min_score=0, limit=50)
    middle = sorted(hit["score"] for hit in every)[len(every) // 2]

    settings.CODE_SEARCH_MIN_SCORE = middle
    by_setting = search(indexed.reader, query, limit=50)
    by_parameter = search(indexed.reader, query, limit=50, min_score=middle)

    assert 0 < len(by_setting) < len(every)
    assert all(hit["score"] >= middle for hit in by_setting)
    assert by_parameter == by_setting


@pytest.mark.parametrize("value", [-0.1, 1.5, "high", True])
def test_a_bad_floor_is_refused_with_its_range(value: object) -> None:
    with pytest.raises(ValidationError, match="min_score must be a number from 0 to 1"):
        CodeSearchParams.build(query="x", min_score=value)


def test_a_function_named_by_the_query_ranks_first(indexed: Tenant) -> None:
    results = search(indexed.reader, "call a function with retries until it succeeds", min_score=0)

    assert (results[0]["file_path"], results[0]["name"]) == ("src/retry.py", "call_with_retries")
    assert results[0]["score"] > results[1]["score"]
