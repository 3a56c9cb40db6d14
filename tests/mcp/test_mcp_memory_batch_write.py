from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.contract import MEMORY_TYPES, assert_memory_shape

pytestmark = pytest.mark.django_db


def test_each_entry_gets_its_own_result_and_a_bad_one_spoils_nothing(agent: McpClient) -> None:
    entries = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": "The API gateway is Envoy."},
        {"scope_type": "organization", "memory_type": "rule", "current_content": "Never deploy on Fridays."},
        {"scope_type": "organization", "memory_type": "decision_log", "current_content": "We chose gRPC in 2024."},
    ]

    results = agent.ok("memory-batch-write", {"organization": "acme", "memories": entries})

    assert [(result["index"], result["ok"]) for result in results] == [(0, True), (1, False), (2, True)]
    assert "rule" in results[1]["error"]
    assert all(memory_type in results[1]["error"] for memory_type in MEMORY_TYPES)
    for result, entry in ((results[0], entries[0]), (results[2], entries[2])):
        assert_memory_shape(result["memory"])
        assert result["memory"]["current_content"] == entry["current_content"]
    stored = agent.ok("memory-get", {"ids": [results[0]["memory"]["id"], results[2]["memory"]["id"]]})
    assert len(stored["memories"]) == 2
    assert stored["missing"] == []
    assert len(agent.ok("memory-list", {})["memories"]) == 2


def test_a_batch_for_another_organization_is_refused(agent: McpClient) -> None:
    entries = [{"scope_type": "organization", "memory_type": "fact", "current_content": "The API gateway is Envoy."}]

    result = agent.call("memory-batch-write", {"organization": "globex", "memories": entries})

    assert "not found" in result.text
    assert agent.ok("memory-list", {})["memories"] == []
