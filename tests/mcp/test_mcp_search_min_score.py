"""`score` and `min_score` through MCP: memory-search, memory-vector-search and memory-recall."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

TEXTS = [
    "Never deploy to production on Friday afternoons; wait for Monday.",
    "Payments store money as integer cents, never floats.",
    "The office coffee machine is on the third floor.",
    "Our brand colour is teal, hex 008080.",
]
QUERY = "can I ship on friday afternoon?"


@pytest.fixture
def memories(write_memory: WriteMemory) -> list[dict[str, Any]]:
    return [write_memory(current_content=text) for text in TEXTS]


@pytest.mark.parametrize("tool", ["memory-search", "memory-vector-search"])
def test_results_carry_a_score_and_the_floor_leaves_out_what_does_not_match(
    agent: McpClient, memories: list[dict[str, Any]], tool: str
) -> None:
    default = agent.ok(tool, {"query": QUERY})
    everything = agent.ok(tool, {"query": QUERY, "min_score": 0})

    assert default[0]["id"] == memories[0]["id"]
    assert len(default) < len(everything) == len(TEXTS)
    for results in (default, everything):
        scores = [memory["score"] for memory in results]
        assert all(0 <= score <= 1 for score in scores)
        assert scores == sorted(scores, reverse=True)
    assert all(memory["score"] >= settings.SEARCH_MIN_SCORE for memory in default)


@pytest.mark.parametrize("tool", ["memory-search", "memory-vector-search"])
def test_a_high_min_score_keeps_only_strong_matches(
    agent: McpClient, memories: list[dict[str, Any]], tool: str
) -> None:
    everything = agent.ok(tool, {"query": QUERY, "min_score": 0})
    floor = (everything[0]["score"] + everything[1]["score"]) / 2

    assert [m["id"] for m in agent.ok(tool, {"query": QUERY, "min_score": floor})] == [everything[0]["id"]]


@pytest.mark.parametrize("tool", ["memory-search", "memory-vector-search", "memory-recall"])
@pytest.mark.parametrize("value", [-1, 2, "high"])
def test_a_bad_min_score_is_refused_with_what_to_send(agent: McpClient, tool: str, value: Any) -> None:
    message = agent.error(tool, {"query": QUERY, "min_score": value})

    assert "min_score" in message


def test_browsing_without_a_query_has_no_score_and_no_floor(agent: McpClient, memories: list[dict[str, Any]]) -> None:
    results = agent.ok("memory-search", {"min_score": 0.9})

    assert len(results) == len(TEXTS)
    assert all("score" not in memory for memory in results)


def test_recall_takes_min_score_for_its_relevant_layer(agent: McpClient, memories: list[dict[str, Any]]) -> None:
    default = agent.ok("memory-recall", {"query": QUERY})
    strict = agent.ok("memory-recall", {"query": QUERY, "min_score": 1})

    assert memories[0]["id"] in default and "relevant, score " in default
    assert memories[2]["id"] not in default  # the coffee machine has nothing to do with shipping
    assert memories[0]["id"] not in strict and "relevant, score " not in strict


def test_the_outsider_finds_nothing_of_acme_even_without_a_floor(
    outsider: McpClient, memories: list[dict[str, Any]]
) -> None:
    found = outsider.ok("memory-search", {"query": QUERY, "min_score": 0})

    assert {memory["id"] for memory in found}.isdisjoint({memory["id"] for memory in memories})
