"""An empty search answer says why, through MCP: after the contract's empty array, memory-search and
memory-vector-search add a block {"below_floor": {"count", "best_score"}, "hint"} when the floor left
scored memories out, and memory-recall's bundle says so in its note. Nothing changes otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

TEXTS = [
    "Never deploy to production on Friday afternoons; wait for Monday.",
    "Payments store money as integer cents, never floats.",
    "The office coffee machine is on the third floor.",
]
QUERY = "can I ship on friday afternoon?"
TOOLS = ["memory-search", "memory-vector-search"]


@pytest.fixture
def memories(write_memory: WriteMemory) -> list[dict[str, Any]]:
    return [write_memory(current_content=text) for text in TEXTS]


def _everything(agent: McpClient, tool: str, query: str = QUERY) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = agent.ok(tool, {"query": query, "min_score": 0, "limit": 50})
    return results


@pytest.mark.parametrize("tool", TOOLS)
def test_an_empty_answer_says_how_many_scored_below_the_floor_and_the_best_score(
    agent: McpClient, memories: list[dict[str, Any]], tool: str
) -> None:
    everything = _everything(agent, tool)
    best = max(memory["score"] for memory in everything)

    answer = agent.call(tool, {"query": QUERY, "min_score": (best + 1) / 2, "limit": 50})

    assert not answer.is_error, answer.text
    assert len(answer.texts) == 2
    assert answer.json(0) == []  # the contract's array comes first, as ever
    block = answer.json(1)
    assert set(block) == {"below_floor", "hint"}
    assert block["below_floor"] == {"count": len(TEXTS), "best_score": best}
    assert f"{len(TEXTS)} memories scored below it (best score {best:g})" in block["hint"]
    assert "min_score: 0" in block["hint"]


@pytest.mark.parametrize("tool", TOOLS)
def test_an_answer_with_results_keeps_its_shape(agent: McpClient, memories: list[dict[str, Any]], tool: str) -> None:
    everything = _everything(agent, tool)
    scores = sorted((memory["score"] for memory in everything), reverse=True)

    answer = agent.call(tool, {"query": QUERY, "min_score": (scores[0] + scores[1]) / 2})

    assert [memory["id"] for memory in answer.json(0)] == [memories[0]["id"]]
    assert len(answer.texts) == 1, answer.texts


@pytest.mark.parametrize("tool", TOOLS)
def test_min_score_0_adds_no_block(agent: McpClient, memories: list[dict[str, Any]], tool: str) -> None:
    answer = agent.call(tool, {"query": "what is the capital of France?", "min_score": 0})

    assert len(answer.json(0)) == len(TEXTS)
    assert len(answer.texts) == 1, answer.texts


def test_nothing_scored_is_the_plain_empty_array(agent: McpClient, memories: list[dict[str, Any]]) -> None:
    # Keyword search scores word matches only: no word in common, nothing under the floor either.
    answer = agent.call("memory-search", {"query": "kubernetes helm charts", "mode": "keyword"})

    assert answer.texts == ["[]"]


def test_recall_says_what_scored_below_its_floor(agent: McpClient, memories: list[dict[str, Any]]) -> None:
    best = max(memory["score"] for memory in _everything(agent, "memory-search"))

    bundle = agent.ok("memory-recall", {"query": QUERY, "min_score": (best + 1) / 2})

    assert "relevant, score " not in bundle
    assert (
        f"none scored at least {(best + 1) / 2:g}; {len(TEXTS)} scored below it, the best {best:g}: "
        "recall with min_score 0 to include them"
    ) in bundle


def test_recall_with_relevant_memories_has_no_such_note(agent: McpClient, memories: list[dict[str, Any]]) -> None:
    bundle = agent.ok("memory-recall", {"query": QUERY})

    assert memories[0]["id"] in bundle
    assert "scored below it" not in bundle


def test_the_outsider_is_told_nothing_of_acme(outsider: McpClient, memories: list[dict[str, Any]]) -> None:
    # Globex has no memories: acme's, all under a floor of 1, must not show up as a count either.
    answer = outsider.call("memory-search", {"query": QUERY, "min_score": 1})

    assert answer.texts == ["[]"]
