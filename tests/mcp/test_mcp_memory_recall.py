from __future__ import annotations

from typing import Any

import pytest

from memories.tokens import count_tokens
from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

FILLER = "Payment retries back off exponentially, starting at one second and capping at one hour. " * 3


@pytest.fixture
def knowledge(curator: McpClient) -> dict[str, dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {
        "locked": {
            "memory_type": "business_rule",
            "status": "locked",
            "importance": 10,
            "current_content": "Never store card numbers; use the payment provider's tokens.",
        },
        "work": {
            "tags": ["work"],
            "status": "verified",  # the rules layer holds what curators stand behind
            "current_content": "Run the payments test suite before opening a PR.",
        },
        **{f"filler{n}": {"current_content": f"{FILLER} Variant {n}."} for n in range(6)},
    }
    batch = [{"scope_type": "organization", "memory_type": "fact"} | entry for entry in entries.values()]
    results = curator.ok("memory-batch-write", {"memories": batch})
    assert all(result["ok"] for result in results), results
    return {name: result["memory"] for name, result in zip(entries, results, strict=True)}


def test_recall_is_markdown_with_the_rules_before_the_relevant_memories(
    agent: McpClient, knowledge: dict[str, dict[str, Any]]
) -> None:
    bundle = agent.ok("memory-recall", {"phases": ["work"], "query": "payment retries", "budget_tokens": 4000})

    assert bundle.startswith("# Memory recall for acme\nPhases: work. Task: payment retries\n")
    rules = bundle.index("## Rules to follow")
    relevant = bundle.index("## Relevant to: payment retries")
    assert rules < bundle.index(knowledge["locked"]["id"]) < relevant
    assert rules < bundle.index(knowledge["work"]["id"]) < relevant
    assert relevant < bundle.index(knowledge["filler0"]["id"])


def test_recall_stays_within_the_token_budget_and_a_bigger_one_holds_more(
    agent: McpClient, knowledge: dict[str, dict[str, Any]]
) -> None:
    entries = []
    for budget in (100, 150, 300, 4000):
        bundle = agent.ok("memory-recall", {"query": "payment retries", "budget_tokens": budget})
        assert count_tokens(bundle) <= budget
        entries.append(bundle.count("\n- **"))

    assert entries == sorted(entries)
    assert 0 < entries[1] < entries[-1] == len(knowledge)


def test_the_same_idempotency_key_returns_the_same_bundle(
    agent: McpClient, write_memory: WriteMemory, knowledge: dict[str, dict[str, Any]]
) -> None:
    arguments = {"query": "payment retries", "budget_tokens": 2000, "idempotency_key": "task-42"}
    first = agent.ok("memory-recall", arguments)
    write_memory(status="active", importance=10, current_content="Payment retries stop after 24 hours.")

    again = agent.ok("memory-recall", arguments)
    fresh = agent.ok("memory-recall", arguments | {"idempotency_key": "task-43"})

    assert again == first
    assert "stop after 24 hours" not in again
    assert "stop after 24 hours" in fresh


def test_recall_needs_phases_or_a_query(agent: McpClient) -> None:
    assert "phases" in agent.error("memory-recall", {})
