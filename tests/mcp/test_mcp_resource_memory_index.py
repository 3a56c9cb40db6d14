from __future__ import annotations

import json

import pytest

from tests.mcp.client import McpClient
from tests.mcp.contract import INDEX_KEYS

pytestmark = pytest.mark.django_db


def test_the_index_holds_the_fifty_latest_memories_without_content(agent: McpClient) -> None:
    batch = [
        {
            "scope_type": "organization",
            "memory_type": "fact",
            "title": f"Service {n} owner",
            "current_content": f"Service number {n} is owned by team {n % 7}.",
            "metadata": {"service": n},
        }
        for n in range(55)
    ]
    written = [result["memory"] for result in agent.ok("memory-batch-write", {"memories": batch})]
    oldest = written[0]
    agent.ok("memory-update", {"id": oldest["id"], "importance": 2})

    index = json.loads(agent.read_resource("memory://index"))

    assert len(index) == 50
    for entry in index:
        assert "current_content" not in entry
        assert entry.keys() >= INDEX_KEYS
        assert entry["organization"] == "acme"
    assert index[0]["id"] == oldest["id"], "the most recently changed memory comes first"
    stamps = [entry["updated_at"] for entry in index]
    assert stamps == sorted(stamps, reverse=True)
    assert "Service number" not in json.dumps(index)


def test_the_index_of_an_empty_organization_is_an_empty_list(agent: McpClient) -> None:
    assert json.loads(agent.read_resource("memory://index")) == []
